/** The events a brand can subscribe an endpoint to (README "Webhooks to your backend"). */
export const webhookEventTypes = [
  "lead.created",
  "sale.created",
  "commission.created",
  "commission.updated",
  "commission.approved",
  "link.disabled",
] as const;
export type WebhookEventType = (typeof webhookEventTypes)[number];

/** Sent only by "send test event", to the one endpoint, whatever it subscribes to. */
export const testEventType = "webhook.test";

/** The payload envelope's `api_version`: bumped when a `data` shape changes incompatibly. */
export const webhookApiVersion = "2026-11-01";
