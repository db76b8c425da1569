import { createRoute, type OpenAPIHono } from "@hono/zod-openapi";
import { parseBearer } from "../../../../lib/auth/bearer.ts";
import { LogoutResponseSchema } from "../../../../lib/cli/cli-schemas.ts";
import { logout } from "../../../../lib/cli/logout.ts";
import { platformError } from "../../../../lib/errors/api-error.ts";
import {
  okResponse,
  platformErrorResponse,
  rateLimitedResponse,
} from "../../../../lib/errors/openapi-responses.ts";
import type { AppEnv } from "../../../../lib/http/app-env.ts";
import { cliErrorPolicy } from "../../../../lib/http/cli-error-policy.ts";
import { rateLimit } from "../../../../lib/http/rate-limit.ts";
import { rateLimits } from "../../../../lib/ratelimit/policies.ts";

export const authLogoutRoute = createRoute({
  method: "post",
  path: "/api/v1/cli/auth/logout",
  tags: ["Command line"],
  summary: "Revoke the command-line login token sent",
  description:
    "Bearer login token. Revokes it at once. Idempotent: an unknown, expired or already revoked token also " +
    "answers 200, so the answer tells nothing about a token. Rate limit 60 per minute per token.",
  security: [{ bearerAuth: [] }],
  responses: {
    200: okResponse("Logged out", LogoutResponseSchema),
    401: platformErrorResponse("Missing Authorization header"),
    429: rateLimitedResponse,
    500: platformErrorResponse("Failed to log out (request_id: <id>)"),
  },
});

export function registerAuthLogout(app: OpenAPIHono<AppEnv>): void {
  app.use(authLogoutRoute.path, cliErrorPolicy("Failed to log out"), rateLimit(rateLimits.cli));
  app.openapi(authLogoutRoute, async (c) => {
    const header = parseBearer(c.req.header("Authorization"));
    if (header.kind !== "token") throw platformError(401, "Missing Authorization header");
    const { db, clock } = c.get("deps");
    const { revoked } = await logout(db, clock, header.token);
    c.get("log").info("cli logout", { revoked });
    return c.json({ success: true as const, data: { logged_out: true as const } }, 200);
  });
}
