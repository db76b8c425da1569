import { and, asc, inArray, lt, ne, notExists, sql } from "drizzle-orm";
import { webhookDeliveries, webhookEvents } from "../../schema/webhooks.ts";
import type { Database } from "../db/client.ts";

const dayMs = 24 * 60 * 60 * 1000;

/**
 * How long the outbound webhooks' rows are kept. A delivery is done when it succeeded, gave up (three days
 * of failures) or was cancelled; it and its attempts (the dashboard's and the attempts route's history) are
 * kept for `days` after that, long enough to answer "did you send it?", then deleted. An event goes once no
 * delivery refers to it and it is as old. A pending delivery, and so its event, is never deleted.
 */
export interface WebhookRetentionPolicy {
  days: number;
  /** Rows per statement, and statements per run: a run deletes at most `batchSize * maxBatches` of each. */
  batchSize: number;
  maxBatches: number;
}

export const webhookRetention: WebhookRetentionPolicy = { days: 30, batchSize: 500, maxBatches: 20 };

export interface WebhookRetentionResult {
  webhookDeliveriesDeleted: number;
  webhookEventsDeleted: number;
}

/** "Done before `cutoff`": the predicate of the partial index `webhook_deliveries_done_idx` (migration 0022). */
function deliveryDoneBefore(cutoff: Date) {
  return and(ne(webhookDeliveries.status, "pending"), lt(webhookDeliveries.completedAt, cutoff));
}

/** Deletes one batch of done deliveries, oldest first; their attempts go with them (on delete cascade). */
async function deleteDoneDeliveries(db: Database, cutoff: Date, batchSize: number): Promise<number> {
  const due = db
    .select({ id: webhookDeliveries.id })
    .from(webhookDeliveries)
    .where(deliveryDoneBefore(cutoff))
    .orderBy(asc(webhookDeliveries.completedAt))
    .limit(batchSize);
  // Guarded on the predicate it selected by: a concurrent run deletes each row once, and nothing pending goes.
  const deleted = await db
    .delete(webhookDeliveries)
    .where(and(inArray(webhookDeliveries.id, due), deliveryDoneBefore(cutoff)))
    .returning({ id: webhookDeliveries.id });
  return deleted.length;
}

/** "Created before `cutoff` and no delivery refers to it" (one probe of the deliveries' (event, endpoint) index). */
function eventUnreferencedBefore(db: Database, cutoff: Date) {
  return and(
    lt(webhookEvents.createdAt, cutoff),
    notExists(
      db
        .select({ one: sql`1` })
        .from(webhookDeliveries)
        .where(sql`${webhookDeliveries.eventId} = ${webhookEvents.id}`),
    ),
  );
}

/** Deletes one batch of old events without deliveries (theirs were deleted above, or their endpoint was). */
async function deleteOrphanEvents(db: Database, cutoff: Date, batchSize: number): Promise<number> {
  const due = db
    .select({ id: webhookEvents.id })
    .from(webhookEvents)
    .where(eventUnreferencedBefore(db, cutoff))
    .orderBy(asc(webhookEvents.createdAt))
    .limit(batchSize);
  const deleted = await db
    .delete(webhookEvents)
    .where(and(inArray(webhookEvents.id, due), eventUnreferencedBefore(db, cutoff)))
    .returning({ id: webhookEvents.id });
  return deleted.length;
}

/**
 * The webhooks' retention job (the five-minute cron): bounded work per run, each step repeated while it
 * finds a full batch; what is left waits for the next run. Idempotent and safe beside a concurrent run.
 */
export async function applyWebhookRetention(
  db: Database,
  now: Date,
  policy: WebhookRetentionPolicy = webhookRetention,
): Promise<WebhookRetentionResult> {
  const cutoff = new Date(now.getTime() - policy.days * dayMs);
  const result: WebhookRetentionResult = { webhookDeliveriesDeleted: 0, webhookEventsDeleted: 0 };
  for (let i = 0; i < policy.maxBatches; i++) {
    const n = await deleteDoneDeliveries(db, cutoff, policy.batchSize);
    result.webhookDeliveriesDeleted += n;
    if (n < policy.batchSize) break;
  }
  for (let i = 0; i < policy.maxBatches; i++) {
    const n = await deleteOrphanEvents(db, cutoff, policy.batchSize);
    result.webhookEventsDeleted += n;
    if (n < policy.batchSize) break;
  }
  return result;
}
