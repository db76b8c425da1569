import { createRoute, type OpenAPIHono } from "@hono/zod-openapi";
import { ProgramPathSchema } from "../../../../lib/dashboard/dashboard-schemas.ts";
import { okResponse, platformErrorResponse } from "../../../../lib/errors/openapi-responses.ts";
import type { AppEnv } from "../../../../lib/http/app-env.ts";
import { rateLimits } from "../../../../lib/ratelimit/policies.ts";
import { readReadiness } from "../../../../lib/readiness/read-readiness.ts";
import { ReadinessResponseSchema } from "../../../../lib/readiness/readiness-response.ts";
import {
  dashboardErrors,
  dashboardMiddleware,
  requireProgramAccess,
  sessionSecurity,
  validationHook,
} from "./access.ts";

export const trackingReadinessRoute = createRoute({
  method: "get",
  path: "/api/tracking/readiness/{programId}",
  tags: ["Dashboard"],
  summary: "The program's readiness verdict",
  description:
    "Dashboard session with an active membership on the program's workspace. The very verdict of " +
    "`GET /api/v1/programs/me/readiness` (same object, no `success` field), for a program chosen by id. " +
    "Errors use the platform envelope. Rate limit 120 per minute per sign-in token (shared by the dashboard reads).",
  security: sessionSecurity,
  request: { params: ProgramPathSchema },
  responses: {
    200: okResponse("The readiness verdict", ReadinessResponseSchema),
    ...dashboardErrors,
    500: platformErrorResponse("Failed to compute readiness. Retry shortly."),
  },
});

export function registerTrackingReadiness(app: OpenAPIHono<AppEnv>): void {
  app.use(
    "/api/tracking/readiness/:programId",
    ...dashboardMiddleware("Failed to compute readiness. Retry shortly.", rateLimits.trackingRead, false),
  );
  app.openapi(
    trackingReadinessRoute,
    async (c) => {
      const programId = Number(c.req.valid("param").programId);
      await requireProgramAccess(c, programId);
      const { db, clock } = c.get("deps");
      const { verdict } = await readReadiness(db, { programId }, clock);
      if (!verdict) throw new Error("program with a membership has no readiness facts");
      return c.json(verdict, 200);
    },
    validationHook,
  );
}
