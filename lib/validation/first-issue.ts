import type { z } from "@hono/zod-openapi";

/**
 * Schemas carry the spec's exact messages; the first issue (in field order) is the one answered, so a
 * request with several problems gets the same message every time.
 */
export function firstIssueMessage(error: z.ZodError): string {
  return error.issues[0]?.message ?? "Invalid request";
}
