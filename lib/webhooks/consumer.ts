import type { Clock } from "../clock.ts";
import type { Config } from "../config/env.ts";
import type { Database } from "../db/client.ts";
import { errorFields, rootLogger } from "../log.ts";
import { deliverWebhook } from "./deliver.ts";
import { WebhookDeliveryMessageSchema } from "./message.ts";
import { SIGNING_KEY_MISSING_LOG, webhookSigningKeyMissing } from "./signing-key-gate.ts";

/** The webhooks queue (wrangler.toml); the worker's `queue()` hands its batches here. */
export const webhooksQueueName = "affiliate-webhooks";

/**
 * Attempts each delivery of the batch. The HTTP outcome, good or bad, is recorded by `deliverWebhook` and
 * the message acknowledged: the database, not the queue, owns the retry schedule. Only a failure to read
 * or record (the database unreachable) retries the message; should that run out too, the delivery's lease
 * expires and the cron hands it over again. Without the signing key (a deployed worker without
 * WEBHOOK_SECRET_KEY, `signing-key-gate.ts`) nothing is attempted.
 */
export async function consumeWebhookDeliveries(
  batch: MessageBatch<unknown>,
  db: Database,
  clock: Clock,
  config: Pick<Config, "webhookSecretKey" | "webhookSecretsUnsealedAllowed">,
): Promise<void> {
  const secretKey = config.webhookSecretKey;
  if (webhookSigningKeyMissing(config)) {
    // Nothing is sent or recorded: each delivery stays pending in the outbox, its lease runs out, and the
    // cron hands it over again once the key is set.
    rootLogger.error(SIGNING_KEY_MISSING_LOG, undefined, { messages: batch.messages.length });
    batch.ackAll();
    return;
  }
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
