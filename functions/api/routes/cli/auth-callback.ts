import { createRoute, type OpenAPIHono, z } from "@hono/zod-openapi";
import { type CompleteLoginResult, completeLogin } from "../../../../lib/cli/complete-login.ts";
import { type ApiError, platformError } from "../../../../lib/errors/api-error.ts";
import {
  okResponse,
  payloadTooLargeResponse,
  platformErrorResponse,
  rateLimitedResponse,
} from "../../../../lib/errors/openapi-responses.ts";
import type { AppEnv } from "../../../../lib/http/app-env.ts";
import { limitBody } from "../../../../lib/http/body-limit.ts";
import { cliErrorPolicy } from "../../../../lib/http/cli-error-policy.ts";
import { rateLimit } from "../../../../lib/http/rate-limit.ts";
import { personRefusalError } from "../../../../lib/identity/identity-errors.ts";
import { rateLimits } from "../../../../lib/ratelimit/policies.ts";

// A JSON body that is not an object (`null`, `[]`) holds neither field: the spec's missing-fields message.
const CallbackRequestSchema = z
  .object(
    {
      state: z.unknown().optional().openapi({ type: "string", description: "The state from `auth/start`" }),
      id_token: z.unknown().optional().openapi({ type: "string", description: "The provider's ID token" }),
    },
    { error: "Missing required fields: state, id_token" },
  )
  .openapi("CliAuthCallbackRequest");

const CallbackResponseSchema = z
  .object({
    success: z.literal(true),
    data: z.object({ status: z.literal("completed"), user_code: z.string() }),
  })
  .openapi("CliAuthCallbackResponse");

export const authCallbackRoute = createRoute({
  method: "post",
  path: "/api/v1/cli/auth/callback",
  tags: ["Command line"],
  // Credential: no credential.
  security: [],
  summary: "Complete a command-line login with the provider's ID token",
  description:
    "No credential. The sign-in page posts the session's `state` and the provider's `id_token`; the token " +
    "is verified (signature, issuer, audience, age), the person resolved (an unverified provider email is " +
    "refused first, then a suspended account), and the session bound to them. Rate limit 60 per minute per IP.",
  request: { body: { required: true, content: { "application/json": { schema: CallbackRequestSchema } } } },
  responses: {
    200: okResponse(
      "The session is signed in; the tool's next poll receives the login token",
      CallbackResponseSchema,
    ),
    400: platformErrorResponse("Missing required fields: state, id_token; Session expired"),
    401: platformErrorResponse("Invalid or expired id_token"),
    403: platformErrorResponse(
      "Suspended account (`ACCOUNT_BLOCKED`) or unverified email (`PROVIDER_EMAIL_NOT_VERIFIED`)",
    ),
    404: platformErrorResponse("Session not found or already used"),
    413: payloadTooLargeResponse,
    429: rateLimitedResponse,
    500: platformErrorResponse("Auth callback failed (request_id: <id>)"),
  },
});

type Refusal = Extract<CompleteLoginResult, { outcome: "refused" }>["reason"];

function refusalError(reason: Refusal): ApiError {
  switch (reason) {
    case "session_not_found":
      return platformError(404, "Session not found or already used");
    case "session_expired":
      return platformError(400, "Session expired");
    case "invalid_id_token":
      return platformError(401, "Invalid or expired id_token");
    default:
      return personRefusalError(reason);
  }
}

const present = (value: unknown): value is string => typeof value === "string" && value.trim() !== "";

export function registerAuthCallback(app: OpenAPIHono<AppEnv>): void {
  app.use(
    authCallbackRoute.path,
    cliErrorPolicy("Auth callback failed"),
    // The limiter first, so a 413 carries the X-RateLimit-* headers like every answer of the route.
    rateLimit(rateLimits.cliWithoutCredential),
    limitBody(),
  );
  app.openapi(authCallbackRoute, async (c) => {
    const body = c.req.valid("json");
    if (!present(body.state) || !present(body.id_token)) {
      throw platformError(400, "Missing required fields: state, id_token");
    }
    const { db, clock, config } = c.get("deps");
    const result = await completeLogin(db, clock, config, { state: body.state, idToken: body.id_token });
    if (result.outcome === "refused") {
      c.get("log").info("cli login refused", { reason: result.reason });
      throw refusalError(result.reason);
    }
    c.get("log").info("cli login signed in");
    return c.json(
      { success: true as const, data: { status: "completed" as const, user_code: result.userCode } },
      200,
    );
  });
}
