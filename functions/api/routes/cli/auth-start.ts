import { createRoute, type OpenAPIHono } from "@hono/zod-openapi";
import { AuthStartResponseSchema } from "../../../../lib/cli/cli-schemas.ts";
import { startLogin } from "../../../../lib/cli/start-login.ts";
import {
  okResponse,
  platformErrorResponse,
  rateLimitedResponse,
} from "../../../../lib/errors/openapi-responses.ts";
import type { AppEnv } from "../../../../lib/http/app-env.ts";
import { cliErrorPolicy } from "../../../../lib/http/cli-error-policy.ts";
import { rateLimit } from "../../../../lib/http/rate-limit.ts";
import { rateLimits } from "../../../../lib/ratelimit/policies.ts";

export const authStartRoute = createRoute({
  method: "post",
  path: "/api/v1/cli/auth/start",
  tags: ["Command line"],
  // Credential: no credential.
  security: [],
  summary: "Start a command-line login session",
  description:
    "No credential. Creates a login session that expires in 5 minutes and answers the state to poll with, " +
    "the sign-in page to open (carrying the state) and a short code both show. Rate limit 60 per minute per IP.",
  responses: {
    200: okResponse("Login session started", AuthStartResponseSchema),
    429: rateLimitedResponse,
    500: platformErrorResponse("Failed to start auth session (request_id: <id>)"),
  },
});

/** Where a person signs in for a command-line login: the dashboard's page, given the state. */
export function signInPageUrl(requestUrl: string, dashboardUrl: string | undefined): string {
  return new URL("/cli/login", dashboardUrl ?? new URL(requestUrl).origin).toString();
}

export function registerAuthStart(app: OpenAPIHono<AppEnv>): void {
  app.use(
    authStartRoute.path,
    cliErrorPolicy("Failed to start auth session"),
    rateLimit(rateLimits.cliWithoutCredential),
  );
  app.openapi(authStartRoute, async (c) => {
    const { db, clock, config } = c.get("deps");
    const started = await startLogin(db, clock, signInPageUrl(c.req.url, config.dashboardUrl));
    c.get("log").info("cli login started");
    return c.json({ success: true as const, data: started }, 200);
  });
}
