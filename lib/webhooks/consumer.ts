import type { Clock } from "../clock.ts";
import type { Database } from "../db/client.ts";
import { errorFields, rootLogger } from "../log.ts";
import { deliverWebhook } from "./deliver.ts";
import { WebhookDeliveryMessageSchema } from "./message.ts";

/** The webhooks queue (wrangler.toml); the worker's `queue()` hands its batches here. */
export const webhooksQueueName = "affiliate-webhooks";

/**
 * Attempts each delivery of the batch. The HTTP outcome, good or bad, is recorded by `deliverWebhook` and
 * the message acknowledged: the database, not the queue, owns the retry schedule. Only a failure to read
 * or record (the database unreachable) retries the message; should that run out too, the delivery's lease
 * expires and the cron hands it over again.
 */
export async function consumeWebhookDeliveries(
  batch: MessageBatch<unknown>,
  db: Database,
  clock: Clock,
  secretKey: string | undefined,
): Promise<void> {
  for (const message of batch.messages) {
    const parsed = WebhookDeliveryMessageSchema.safeParse(message.body);
    if (!parsed.success) {
      rootLogger.error("unreadable webhook message dropped", undefined, { id: message.id });
      message.ack();
      continue;
    }
    const deliveryId = parsed.data.delivery_id;
    try {
      const outcome = await deliverWebhook(db, deliveryId, { now: () => clock.now(), secretKey });
      rootLogger.info("webhook delivery attempted", { delivery_id: deliveryId, outcome });
      message.ack();
    } catch (error) {
      rootLogger.warn("webhook delivery not recorded, retrying", {
        delivery_id: deliveryId,
        ...errorFields(error),
      });
      message.retry({ delaySeconds: 30 });
    }
  }
}
