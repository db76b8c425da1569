/** The versioned envelope every delivery carries (documented under `webhooks` in the OpenAPI document). */
export interface WebhookPayload {
  type: string;
  api_version: string;
  id: string;
  created_at: string;
  data: Record<string, unknown>;
}

/** One serialization per event, so a retried delivery carries the very same body. */
export function webhookBody(event: {
  id: string;
  type: string;
  apiVersion: string;
  createdAt: Date;
  data: Record<string, unknown>;
}): string {
  const payload: WebhookPayload = {
    type: event.type,
    api_version: event.apiVersion,
    id: event.id,
    created_at: event.createdAt.toISOString(),
    data: event.data,
  };
  return JSON.stringify(payload);
}
