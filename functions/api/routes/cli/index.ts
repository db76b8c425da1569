import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../../../lib/http/app-env.ts";
import { rateLimit } from "../../../../lib/http/rate-limit.ts";
import { rateLimits } from "../../../../lib/ratelimit/policies.ts";
import { registerAuthCallback } from "./auth-callback.ts";
import { registerAuthLogout } from "./auth-logout.ts";
import { registerAuthPoll } from "./auth-poll.ts";
import { registerAuthStart } from "./auth-start.ts";
import { registerInit } from "./init.ts";
import { registerCliLoginPage } from "./login-page.ts";
import { registerPrograms } from "./programs.ts";
import { registerStatus } from "./status.ts";
import { registerStripeConnect } from "./stripe-connect.ts";
import { registerTestEvent } from "./test-event.ts";

/** The command-line tool's routes (`/api/v1/cli/*`, spec section 4). */
export function registerCli(app: OpenAPIHono<AppEnv>): void {
  registerAuthStart(app);
  registerAuthCallback(app);
  registerAuthPoll(app);
  registerAuthLogout(app);
  registerInit(app);
  registerPrograms(app);
  registerStatus(app);
  registerTestEvent(app);
  registerStripeConnect(app);
  registerCliLoginPage(app);
  // Last: a path of the family no route has answers 404 with the family's X-RateLimit-* headers (spec section
  // 8 limits all of `/api/v1/cli/*`, and every response there carries them), counted like the keyed routes. A
  // known path's other methods were counted by their route's own limiter, which this one then leaves alone.
  app.all("/api/v1/cli/*", rateLimit(rateLimits.cli), (c) => c.notFound());
}
