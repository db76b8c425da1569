import { and, asc, eq, inArray, isNotNull, isNull, lt, sql } from "drizzle-orm";
import { stripeEvents } from "../../schema/stripe-events.ts";
import type { Database } from "../db/client.ts";
import { redactPersonalFields } from "./personal-fields.ts";

const dayMs = 24 * 60 * 60 * 1000;

/**
 * How long a stored provider event keeps what. The provider itself resends an event for 30 days, and replay
 * (README, "Replaying an event") is for events that failed; a completed event is kept whole for 30 days after
 * it completed (time to notice a wrong outcome and replay it), without its personal fields until 90 days,
 * then without a payload at all. An event that has not completed (`claimed`, `failed`) keeps its payload
 * whole: it may still need a replay.
 */
export interface PayloadRetentionPolicy {
  personalFieldsDays: number;
  payloadDays: number;
  batchSize: number;
  maxBatches: number;
}

export const payloadRetention: PayloadRetentionPolicy = {
  personalFieldsDays: 30,
  payloadDays: 90,
  /** Rows per statement, and statements per run: a run touches at most `batchSize * maxBatches` rows. */
  batchSize: 100,
  maxBatches: 20,
};

export interface PayloadRetentionResult {
  payloadsDropped: number;
  payloadsRedacted: number;
}

/** "Completed before `cutoff`, payload still there": the guard both steps write under. */
function completedBefore(cutoff: Date) {
  return and(
    eq(stripeEvents.status, sql`'completed'`),
    isNotNull(stripeEvents.payload),
    lt(stripeEvents.completedAt, cutoff),
  );
}

/**
 * Drops the payload of completed events past `payloadDays`, in one statement per batch (oldest first).
 * Guarded on the same predicate it selected by, so it is idempotent and safe beside a concurrent run.
 */
async function dropOldPayloads(db: Database, cutoff: Date, batchSize: number): Promise<number> {
  const due = db
    .select({ id: stripeEvents.id })
    .from(stripeEvents)
    .where(completedBefore(cutoff))
    .orderBy(asc(stripeEvents.completedAt))
    .limit(batchSize);
  const dropped = await db
    .update(stripeEvents)
    .set({ payload: null })
    .where(and(inArray(stripeEvents.id, due), completedBefore(cutoff)))
    .returning({ id: stripeEvents.id });
  return dropped.length;
}

/**
 * Removes the personal fields of completed events past `personalFieldsDays`: one read of a batch, the
 * redaction in the worker (a payload is JSON text that Postgres' jsonb may refuse, e.g. an escaped NUL),
 * then one transaction writing every row under the guard that it is still unredacted.
 */
async function redactBatch(db: Database, cutoff: Date, now: Date, batchSize: number): Promise<number> {
  const rows = await db
    .select({ id: stripeEvents.id, payload: stripeEvents.payload })
    .from(stripeEvents)
    .where(and(completedBefore(cutoff), isNull(stripeEvents.payloadRedactedAt)))
    .orderBy(asc(stripeEvents.completedAt))
    .limit(batchSize);
  if (rows.length === 0) return 0;
  const [first, ...rest] = rows.map((row) =>
    db
      .update(stripeEvents)
      .set({
        payload: row.payload === null ? null : redactPersonalFields(row.payload),
        payloadRedactedAt: now,
      })
      .where(and(eq(stripeEvents.id, row.id), isNull(stripeEvents.payloadRedactedAt))),
  );
  if (first) await db.batch([first, ...rest]);
  return rows.length;
}

/**
 * The retention job (run by the cron trigger): bounded work per run, each step repeated while it finds a
 * full batch. Safe to run twice at once: every write is guarded on the state it read.
 */
export async function applyPayloadRetention(
  db: Database,
  now: Date,
  policy: PayloadRetentionPolicy = payloadRetention,
): Promise<PayloadRetentionResult> {
  const dropCutoff = new Date(now.getTime() - policy.payloadDays * dayMs);
  const redactCutoff = new Date(now.getTime() - policy.personalFieldsDays * dayMs);
  const result: PayloadRetentionResult = { payloadsDropped: 0, payloadsRedacted: 0 };
  for (let i = 0; i < policy.maxBatches; i++) {
    const n = await dropOldPayloads(db, dropCutoff, policy.batchSize);
    result.payloadsDropped += n;
    if (n < policy.batchSize) break;
  }
  for (let i = 0; i < policy.maxBatches; i++) {
    const n = await redactBatch(db, redactCutoff, now, policy.batchSize);
    result.payloadsRedacted += n;
    if (n < policy.batchSize) break;
  }
  return result;
}
