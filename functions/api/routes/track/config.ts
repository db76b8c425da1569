import { createRoute, type OpenAPIHono } from "@hono/zod-openapi";
import {
  okResponse,
  platformErrorResponse,
  rateLimitedResponse,
} from "../../../../lib/errors/openapi-responses.ts";
import type { AppEnv } from "../../../../lib/http/app-env.ts";
import { errorPolicy } from "../../../../lib/http/dependencies.ts";
import { publicCors } from "../../../../lib/http/public-cors.ts";
import { preflightRateLimitHeaders, rateLimit } from "../../../../lib/http/rate-limit.ts";
import { rateLimits } from "../../../../lib/ratelimit/policies.ts";
import { ConfigQuerySchema, ConfigResponseSchema } from "../../../../lib/tracking/config/config-request.ts";
import { readTrackerConfig } from "../../../../lib/tracking/config/config-store.ts";

export const configRoute = createRoute({
  method: "get",
  path: "/api/v1/track/config",
  tags: ["Tracking"],
  // Credential: no credential.
  security: [],
  summary: "A program's public tracker settings, judged for the calling page's origin",
  description:
    "No authentication; readable from any origin. Rate limit 60 per minute per IP. Tells a page (or a " +
    "developer: send `Origin: https://your.site`) the cookie lifetime, the lead capture mode and whether " +
    "that origin may use the browser routes (click, visit, lead).",
  request: { query: ConfigQuerySchema },
  responses: {
    200: okResponse("The program's tracker settings", ConfigResponseSchema),
    400: platformErrorResponse("Missing or malformed program_id, or a program_id that names no program"),
    429: rateLimitedResponse,
    500: platformErrorResponse("Config lookup failed"),
  },
});

export function registerConfig(app: OpenAPIHono<AppEnv>): void {
  app.use(
    configRoute.path,
    errorPolicy("Config lookup failed"),
    preflightRateLimitHeaders(rateLimits.config),
    publicCors("GET"),
    rateLimit(rateLimits.config),
  );
  app.openapi(configRoute, async (c) => {
    const { program_id } = c.req.valid("query");
    const config = await readTrackerConfig(
      c.get("deps").db,
      Number(program_id.trim()),
      c.req.header("Origin"),
    );
    return c.json(config, 200);
  });
}
