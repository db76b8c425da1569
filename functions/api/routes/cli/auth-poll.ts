import { createRoute, type OpenAPIHono } from "@hono/zod-openapi";
import { PollQuerySchema, PollResponseSchema } from "../../../../lib/cli/cli-schemas.ts";
import { pollLogin } from "../../../../lib/cli/poll-login.ts";
import { platformError } from "../../../../lib/errors/api-error.ts";
import {
  okResponse,
  platformErrorResponse,
  rateLimitedResponse,
} from "../../../../lib/errors/openapi-responses.ts";
import type { AppEnv } from "../../../../lib/http/app-env.ts";
import { cliErrorPolicy } from "../../../../lib/http/cli-error-policy.ts";
import { rateLimit } from "../../../../lib/http/rate-limit.ts";
import { personRefusalError } from "../../../../lib/identity/identity-errors.ts";
import { rateLimits } from "../../../../lib/ratelimit/policies.ts";

export const authPollRoute = createRoute({
  method: "get",
  path: "/api/v1/cli/auth/poll",
  tags: ["Command line"],
  // Credential: no credential.
  security: [],
  summary: "Poll a command-line login session for its login token",
  description:
    "No credential. `data.status` is `pending` until the person signs in, `complete` with the login token " +
    "on the first poll after that (never again: a second poll is 400 `Session already consumed`), and " +
    "`expired` once the 5 minutes are over; 403 with the refusal when the sign-in for it was refused. Rate " +
    "limit 60 per minute per IP.",
  request: { query: PollQuerySchema },
  responses: {
    200: okResponse("Pending, expired, or complete with the login token", PollResponseSchema),
    400: platformErrorResponse("Missing state parameter; Session already consumed"),
    403: platformErrorResponse(
      "The sign-in for this session was refused: `Your account has been suspended.` (`details.code` " +
        "`ACCOUNT_BLOCKED`) or the provider email is not verified (`PROVIDER_EMAIL_NOT_VERIFIED`), as the " +
        "callback answered; run the login again",
    ),
    404: platformErrorResponse("Session not found"),
    429: rateLimitedResponse,
    500: platformErrorResponse("Failed to poll auth session (request_id: <id>)"),
  },
});

const refusals = {
  session_not_found: () => platformError(404, "Session not found"),
  session_consumed: () => platformError(400, "Session already consumed"),
  // The sign-in for the session was refused: the poller gets the refusal the sign-in got.
  account_blocked: () => personRefusalError("account_blocked"),
  email_not_verified: () => personRefusalError("email_not_verified"),
} as const;

export function registerAuthPoll(app: OpenAPIHono<AppEnv>): void {
  app.use(
    authPollRoute.path,
    cliErrorPolicy("Failed to poll auth session"),
    rateLimit(rateLimits.cliWithoutCredential),
  );
  app.openapi(authPollRoute, async (c) => {
    const { db, clock } = c.get("deps");
    const result = await pollLogin(db, clock, c.req.valid("query").state);
    if (result.outcome === "refused") throw refusals[result.reason]();
    if (result.outcome !== "signed_in")
      return c.json({ success: true as const, data: { status: result.outcome } }, 200);
    c.get("log").info("cli login token issued");
    return c.json(
      {
        success: true as const,
        data: {
          status: "complete" as const,
          token: result.token,
          expires_at: result.expiresAt.toISOString(),
          email: result.email,
        },
      },
      200,
    );
  });
}
