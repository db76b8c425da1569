/**
 * The first field of a body that the route does not take, with the refusal the management routes answer for
 * it (`Unknown field: enable. Valid: url, events, enabled, description`): a misspelt field is refused, not
 * ignored, so `enable: false` cannot leave something enabled. The name is cut to 64 characters in the message.
 */
export function unknownField(
  body: Record<string, unknown>,
  valid: readonly string[],
): { field: string; message: string } | undefined {
  const field = Object.keys(body).find((key) => !valid.includes(key));
  if (field === undefined) return undefined;
  return { field, message: `Unknown field: ${field.slice(0, 64)}. Valid: ${valid.join(", ")}` };
}
