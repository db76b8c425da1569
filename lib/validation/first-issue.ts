import type { z } from "@hono/zod-openapi";

/** What a route without a message of its own answers for a JSON body that is not an object (`[]`, `null`). */
export const BODY_NOT_AN_OBJECT = "Request body must be a JSON object";

/**
 * Schemas carry the spec's exact messages; the first issue (in field order) is the one answered, so a
 * request with several problems gets the same message every time. A body that is not an object, refused by
 * a schema that names no message for it, gets ours instead of the validator's wording ("Invalid input: ...").
 */
export function firstIssueMessage(error: z.ZodError): string {
  const issue = error.issues[0];
  if (!issue) return "Invalid request";
  const validatorsOwnWording = issue.message.startsWith("Invalid input");
  if (issue.path.length === 0 && issue.code === "invalid_type" && validatorsOwnWording) {
    return BODY_NOT_AN_OBJECT;
  }
  return issue.message;
}
