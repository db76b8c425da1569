/**
 * The events worker's one error shape, `{"error": {"code", "message"}}` (the provider reads only the status;
 * the body is for whoever looks at the endpoint's delivery log). Every non-2xx answer goes through here.
 */
export function webhookError(
  status: number,
  code: string,
  message: string,
  headers: Record<string, string> = {},
): Response {
  return Response.json({ error: { code, message } }, { status, headers });
}
