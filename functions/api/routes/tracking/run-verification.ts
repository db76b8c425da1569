import { createRoute, type OpenAPIHono } from "@hono/zod-openapi";
import { testEventTypes } from "../../../../lib/cli/test-events/run-test-event.ts";
import {
  ProgramPathSchema,
  VerificationResponseSchema,
} from "../../../../lib/dashboard/dashboard-schemas.ts";
import { runDashboardTest } from "../../../../lib/dashboard/dashboard-test-events.ts";
import { typedError } from "../../../../lib/errors/api-error.ts";
import { okResponse, platformErrorResponse } from "../../../../lib/errors/openapi-responses.ts";
import type { AppEnv } from "../../../../lib/http/app-env.ts";
import { rateLimits } from "../../../../lib/ratelimit/policies.ts";
import {
  dashboardErrors,
  dashboardMiddleware,
  requireProgramAccess,
  sessionSecurity,
  validationHook,
} from "./access.ts";
import { trackingWorkerCalls } from "./tracking-worker-calls.ts";

export const trackingRunVerificationRoute = createRoute({
  method: "post",
  path: "/api/tracking/run-verification/{programId}",
  tags: ["Dashboard"],
  summary: "Run the synthetic click -> lead -> sale chain",
  description:
    "Dashboard session with an active membership on the program's workspace; a cookie-authenticated call " +
    "needs this service's own Origin. The command line's synthetic chain: each step through the tracking " +
    "endpoint on the program's verification fixtures, stopping at the first that fails. Shares the cap of " +
    "10 chains per program per hour with the command line: over it, 429 `rate_limited` with message " +
    "`Too many synthetic chains (max 10/program/hour).` and `Retry-After`. No body. Rate limit 20 per minute " +
    "per sign-in token (shared with the test route).",
  security: sessionSecurity,
  request: { params: ProgramPathSchema },
  responses: {
    200: okResponse("Every step of the chain", VerificationResponseSchema),
    ...dashboardErrors,
    500: platformErrorResponse("Failed to run synthetic chain"),
  },
});

export function registerTrackingRunVerification(app: OpenAPIHono<AppEnv>): void {
  app.use(
    "/api/tracking/run-verification/:programId",
    ...dashboardMiddleware("Failed to run synthetic chain", rateLimits.trackingWrite, false),
  );
  app.openapi(
    trackingRunVerificationRoute,
    async (c) => {
      const programId = Number(c.req.valid("param").programId);
      await requireProgramAccess(c, programId);
      const { db, clock, config } = c.get("deps");
      const result = await runDashboardTest(db, trackingWorkerCalls(c), {
        programId,
        now: clock.now(),
        docsUrl: config.docsUrl,
        request: { kind: "chain" },
      });
      const log = c.get("log");
      if (result.outcome === "chain_capped") {
        log.info("synthetic chain capped", { program_id: programId });
        c.header("Retry-After", String(result.retryAfterSeconds));
        throw typedError(429, "rate_limited", "Too many synthetic chains (max 10/program/hour).", {
          status: 429,
          retry_after_seconds: result.retryAfterSeconds,
        });
      }
      if (result.outcome !== "chain") throw new Error("a chain ran as a single event");
      const ok = result.steps.length === testEventTypes.length && result.steps.every((step) => step.ok);
      log.info("dashboard synthetic chain", { ok, steps: result.steps.length, program_id: programId });
      if (result.steps.some((step) => step.status >= 500)) throw new Error("synthetic chain step failed");
      return c.json(
        {
          success: true as const,
          data: { program_id: programId, test_mode: true as const, ok, steps: result.steps },
        },
        200,
      );
    },
    validationHook,
  );
}
