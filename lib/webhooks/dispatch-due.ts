import { sql } from "drizzle-orm";
import { webhookDeliveries } from "../../schema/webhooks.ts";
import type { Database } from "../db/client.ts";
import { columnName, fromDriver } from "../db/columns.ts";
import { rootLogger } from "../log.ts";
import type { WebhookDeliveryMessage } from "./message.ts";
import { leaseSeconds } from "./retry-policy.ts";

const maxBatch = 100;

/**
 * The outbox sweep (every minute, from the cron): leases the deliveries that are due and puts them on the
 * queue. The lease is taken in one statement (`skip locked`: two sweeps at once take different rows); if the
 * queue refuses the send, the lease simply runs out and the next sweep hands the delivery over again, so a
 * delivery is never lost, at worst sent twice (at least once; receivers dedupe on `webhook-id`).
 * Never throws: a failing sweep must not stop the other jobs. Returns how many were handed over.
 */
export async function dispatchDueWebhooks(
  db: Database,
  queue: Queue<unknown> | undefined,
  now: Date,
  limit = 500,
): Promise<number> {
  if (!queue) return 0;
  const at = now.toISOString();
  const d = webhookDeliveries;
  try {
    const leased = await db.execute<{ id: string }>(sql`
      update ${d}
      set ${columnName(d.leaseUntil)} = ${at}::timestamptz + make_interval(secs => ${leaseSeconds})
      where ${d.id} in (
        select ${d.id} from ${d}
        where ${d.status} = 'pending' and ${d.nextAttemptAt} <= ${at}::timestamptz
          and (${d.leaseUntil} is null or ${d.leaseUntil} <= ${at}::timestamptz)
        order by ${d.nextAttemptAt}
        limit ${limit}
        for update skip locked)
      returning ${d.id} as id`);
    const messages: WebhookDeliveryMessage[] = leased.rows.map((row) => ({
      kind: "webhook_delivery",
      delivery_id: fromDriver(d.id, row.id),
    }));
    for (let start = 0; start < messages.length; start += maxBatch) {
      await queue.sendBatch(
        messages.slice(start, start + maxBatch).map((body) => ({ body, contentType: "json" as const })),
      );
    }
    return messages.length;
  } catch (error) {
    rootLogger.error("webhook dispatch failed; leases will expire and be retried", error);
    return 0;
  }
}
