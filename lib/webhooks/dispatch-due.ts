import { sql } from "drizzle-orm";
import type { Database } from "../db/client.ts";
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
  try {
    const leased = await db.execute<{ id: string }>(sql`
      update webhook_deliveries d
      set lease_until = ${at}::timestamptz + make_interval(secs => ${leaseSeconds})
      where d.id in (
        select id from webhook_deliveries
        where status = 'pending' and next_attempt_at <= ${at}::timestamptz
          and (lease_until is null or lease_until <= ${at}::timestamptz)
        order by next_attempt_at
        limit ${limit}
        for update skip locked)
      returning d.id`);
    const messages: WebhookDeliveryMessage[] = leased.rows.map((r) => ({
      kind: "webhook_delivery",
      delivery_id: Number(r.id),
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
