import { createRoute, type OpenAPIHono } from "@hono/zod-openapi";
import {
  DashboardTestRequestSchema,
  DashboardTestResponseSchema,
} from "../../../../lib/dashboard/dashboard-schemas.ts";
import { runDashboardTest } from "../../../../lib/dashboard/dashboard-test-events.ts";
import { okResponse, platformErrorResponse } from "../../../../lib/errors/openapi-responses.ts";
import type { AppEnv } from "../../../../lib/http/app-env.ts";
import { rateLimits } from "../../../../lib/ratelimit/policies.ts";
import {
  bodyErrors,
  dashboardErrors,
  dashboardMiddleware,
  programOfBodyAccessFirst,
  requireProgramAccess,
  sessionSecurity,
  validationHook,
} from "./access.ts";
import { trackingWorkerCalls } from "./tracking-worker-calls.ts";

export const trackingTestRoute = createRoute({
  method: "post",
  path: "/api/tracking/test",
  tags: ["Dashboard"],
  summary: "Record a test click, lead or sale from the dashboard verifier",
  description:
    "Dashboard session with an active membership on the workspace of `program_id`; a cookie-authenticated " +
    "call needs this service's own Origin. Records one test event through the tracking endpoint, exactly as " +
    "the command line's `test` does (it counts toward integration verification), and returns its step and the " +
    "reference to pass to `check-test-events`. A failed step (e.g. a lead the tracking endpoint refused) is a " +
    "200 with `step.ok` false. Rate limit 20 per minute per sign-in token (shared with run-verification).",
  security: sessionSecurity,
  request: {
    body: { required: true, content: { "application/json": { schema: DashboardTestRequestSchema } } },
  },
  responses: {
    200: okResponse("The test event's step", DashboardTestResponseSchema),
    ...dashboardErrors,
    ...bodyErrors,
    500: platformErrorResponse("Failed to process test event"),
  },
});

export function registerTrackingTest(app: OpenAPIHono<AppEnv>): void {
  app.use(
    trackingTestRoute.path,
    ...dashboardMiddleware("Failed to process test event", rateLimits.trackingWrite, true),
    programOfBodyAccessFirst,
  );
  app.openapi(
    trackingTestRoute,
    async (c) => {
      const body = c.req.valid("json");
      await requireProgramAccess(c, body.program_id);
      const { db, clock, config } = c.get("deps");
      const result = await runDashboardTest(db, trackingWorkerCalls(c), {
        programId: body.program_id,
        now: clock.now(),
        docsUrl: config.docsUrl,
        request: { kind: "event", eventType: body.event_type },
      });
      if (result.outcome !== "event") throw new Error("a single test event ran as a chain");
      const step = result.report;
      c.get("log").info("dashboard test event", {
        step: step.step,
        status: step.status,
        program_id: body.program_id,
      });
      if (step.status >= 500) throw new Error(`test ${step.step} failed`);
      const event =
        step.ok && step.id !== null
          ? step.step === "click"
            ? { kind: "click" as const, id: String(step.id) }
            : { kind: step.step, id: Number(step.id) }
          : null;
      return c.json(
        {
          success: true as const,
          data: { program_id: body.program_id, test_mode: true as const, step, event },
        },
        200,
      );
    },
    validationHook,
  );
}
