import { z } from "zod";

/** What travels on the webhooks queue: the delivery to attempt; everything else is read from the database. */
export const WebhookDeliveryMessageSchema = z.object({
  kind: z.literal("webhook_delivery"),
  delivery_id: z.number().int().positive(),
});

export type WebhookDeliveryMessage = z.infer<typeof WebhookDeliveryMessageSchema>;
