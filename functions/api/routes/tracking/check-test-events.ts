import { createRoute, type OpenAPIHono } from "@hono/zod-openapi";
import {
  CheckTestEventsRequestSchema,
  CheckTestEventsResponseSchema,
} from "../../../../lib/dashboard/dashboard-schemas.ts";
import { checkTestEvents, type TestEventRef } from "../../../../lib/dashboard/dashboard-test-events.ts";
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

export const trackingCheckTestEventsRoute = createRoute({
  method: "post",
  path: "/api/tracking/check-test-events",
  tags: ["Dashboard"],
  summary: "Did these test events land?",
  description:
    "Dashboard session with an active membership on the workspace of `program_id`; a cookie-authenticated " +
    "call needs this service's own Origin. `events` are the references the test route returned (1 to 20); " +
    "each is `landed` when it is recorded as a test event of this program. Read-only; rate limit 120 per " +
    "minute per sign-in token (shared by the dashboard reads), so the page can poll.",
  security: sessionSecurity,
  request: {
    body: { required: true, content: { "application/json": { schema: CheckTestEventsRequestSchema } } },
  },
  responses: {
    200: okResponse("Each event, landed or not", CheckTestEventsResponseSchema),
    ...dashboardErrors,
    ...bodyErrors,
    500: platformErrorResponse("Failed to check test events"),
  },
});

export function registerTrackingCheckTestEvents(app: OpenAPIHono<AppEnv>): void {
  app.use(
    trackingCheckTestEventsRoute.path,
    ...dashboardMiddleware("Failed to check test events", rateLimits.trackingRead, true),
    programOfBodyAccessFirst,
  );
  app.openapi(
    trackingCheckTestEventsRoute,
    async (c) => {
      const body = c.req.valid("json");
      await requireProgramAccess(c, body.program_id);
      const refs = body.events as TestEventRef[];
      const checked = await checkTestEvents(c.get("deps").db, body.program_id, refs);
      return c.json({ success: true as const, data: { program_id: body.program_id, ...checked } }, 200);
    },
    validationHook,
  );
}
