import { createRoute, type OpenAPIHono } from "@hono/zod-openapi";
import { platformError } from "../../../../lib/errors/api-error.ts";
import { platformErrorResponse, rateLimitedResponse } from "../../../../lib/errors/openapi-responses.ts";
import type { AppEnv } from "../../../../lib/http/app-env.ts";
import { cliErrorPolicy } from "../../../../lib/http/cli-error-policy.ts";
import { rateLimit } from "../../../../lib/http/rate-limit.ts";
import { rateLimits } from "../../../../lib/ratelimit/policies.ts";

export const stripeConnectMessage =
  "This endpoint is retired. Connect your payments provider account from the dashboard: program settings, Payments.";

export const stripeConnectRoute = createRoute({
  method: "post",
  path: "/api/v1/cli/stripe-connect",
  tags: ["Command line"],
  // Credential: retired: no credential is read.
  security: [],
  summary: "Retired: always 410",
  description: "Connect the payments provider from the dashboard (program settings, Payments) instead.",
  responses: {
    410: platformErrorResponse(stripeConnectMessage),
    429: rateLimitedResponse,
  },
});

export function registerStripeConnect(app: OpenAPIHono<AppEnv>): void {
  app.use(
    stripeConnectRoute.path,
    cliErrorPolicy("Internal server error"),
    rateLimit(rateLimits.cliWithoutCredential),
  );
  const retired = () => {
    throw platformError(410, stripeConnectMessage);
  };
  app.openapi(stripeConnectRoute, retired);
  // "Always 410" (spec section 4): a client that calls it with another method is told the same, not 404.
  app.all(stripeConnectRoute.path, retired);
}
