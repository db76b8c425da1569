import type { z } from "@hono/zod-openapi";
import type { Context } from "hono";
import { createMiddleware } from "hono/factory";
import {
  programAccessRefused,
  requireProgramMembership,
} from "../../../../lib/auth/require-program-membership.ts";
import { platformError } from "../../../../lib/errors/api-error.ts";
import {
  payloadTooLargeResponse,
  platformErrorResponse,
  rateLimitedResponse,
} from "../../../../lib/errors/openapi-responses.ts";
import type { AppEnv } from "../../../../lib/http/app-env.ts";
import { limitBody } from "../../../../lib/http/body-limit.ts";
import { errorPolicy } from "../../../../lib/http/dependencies.ts";
import { rateLimit } from "../../../../lib/http/rate-limit.ts";
import { requireSession } from "../../../../lib/http/require-session.ts";
import type { RateLimitPolicy } from "../../../../lib/ratelimit/types.ts";
import { maxDatabaseId } from "../../../../lib/validation/database-limits.ts";
import { assertStorableText } from "../../../../lib/validation/storable-text.ts";

/** The middleware of every dashboard route, in order: 500 wording, body limit (writes), rate limit, session. */
export function dashboardMiddleware(failureMessage: string, policy: RateLimitPolicy, withBody: boolean) {
  return [errorPolicy(failureMessage), ...(withBody ? [limitBody()] : []), rateLimit(policy), requireSession];
}

/**
 * The signed-in person's active membership on the program's workspace, or 403. Checked once per request and
 * program: the body's program is checked before the body's validation, then again by the handler, which
 * reads it validated (`programOfBodyAccessFirst`).
 */
export async function requireProgramAccess(c: Context<AppEnv>, programId: number): Promise<void> {
  if (c.get("programAccessChecked") === programId) return;
  const session = c.get("session");
  if (!session) throw new Error("dashboard route without a session");
  // An id beyond the `integer` ids names no program: refused like any other, never sent to Postgres.
  const id = programId <= maxDatabaseId ? programId : undefined;
  const membership = await requireProgramMembership(c.get("deps").db, session.userId, id);
  if (!membership.ok) throw programAccessRefused();
  c.set("programAccessChecked", programId);
}

/**
 * The two POST routes name their program in the body: its membership is checked before the rest of the body
 * is validated, as the routes with the program in the path do (README: membership 403, then query and body
 * errors), so a stranger learns nothing of another program from the body's errors. A `program_id` that is not
 * an id is the validator's 400; the handler asks again with the validated body (answered without a second
 * round trip when it is the program checked here), so no body reaches a program unchecked.
 */
export const programOfBodyAccessFirst = createMiddleware<AppEnv>(async (c, next) => {
  const body: unknown = await c.req.json().catch(() => undefined);
  const programId =
    body && typeof body === "object" ? (body as { program_id?: unknown }).program_id : undefined;
  if (typeof programId === "number" && Number.isSafeInteger(programId) && programId > 0) {
    await requireProgramAccess(c, programId);
  }
  await next();
});

/**
 * Validation failures of these routes name the parameter: 400 with
 * `error.details.parameter` (as the analytics route does for its query).
 */
export function invalidParameter(parameter: string, message: string) {
  // Spec section 7: platform errors other than sale and refund carry no `error.code`.
  return platformError(400, message, { details: { parameter } });
}

export function validationHook<T>(
  result: { success: true; data: T } | { success: false; error: z.ZodError },
): undefined {
  if (!result.success) {
    const issue = result.error.issues[0];
    const parameter = String(issue?.path[0] ?? "body");
    // A query parameter given twice (`?limit=5&limit=6`) reaches the schema as a list: say so, not the
    // validator's "expected string, received array".
    const repeated = issue?.code === "invalid_type" && issue.message.endsWith("received array");
    throw invalidParameter(
      parameter,
      repeated ? `${parameter} must be given once.` : (issue?.message ?? "Invalid request"),
    );
  }
  assertStorableText(result.data);
  return undefined;
}

export const dashboardErrors = {
  400: platformErrorResponse("A parameter is invalid (`details.parameter` names it)"),
  401: platformErrorResponse(
    "No sign-in token (`Sign-in required`), an unknown, expired or revoked one, or a program API key",
  ),
  403: platformErrorResponse(
    "No active membership on the program's workspace, or no such program (`You do not have access to this " +
      "program`); a suspended account; a cookie-authenticated POST from another origin",
  ),
  429: rateLimitedResponse,
};

export const bodyErrors = { 413: payloadTooLargeResponse };

export const sessionSecurity: Record<string, string[]>[] = [{ bearerAuth: [] }, { sessionCookie: [] }];
