import { createRoute, type OpenAPIHono } from "@hono/zod-openapi";
import { sql } from "drizzle-orm";
import { integrationStatusFrom, integrationStatusQuery } from "../../../../lib/cli/integration-status.ts";
import { DashboardStatusSchema, ProgramPathSchema } from "../../../../lib/dashboard/dashboard-schemas.ts";
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

export const trackingStatusRoute = createRoute({
  method: "get",
  path: "/api/tracking/status/{programId}",
  tags: ["Dashboard"],
  summary: "The program's integration status",
  description:
    "Dashboard session (cookie or Bearer sign-in token) with an active membership on the program's " +
    "workspace; a program API key is refused. The command line's status: which of click, lead and sale " +
    "reached the service (live, or as test events), whether the integration is verified, and the next step. " +
    "Rate limit 120 per minute per sign-in token (shared by the dashboard reads).",
  security: sessionSecurity,
  request: { params: ProgramPathSchema },
  responses: {
    200: okResponse("Integration status", DashboardStatusSchema),
    ...dashboardErrors,
    500: platformErrorResponse("Failed to get status"),
  },
});

export function registerTrackingStatus(app: OpenAPIHono<AppEnv>): void {
  app.use(
    "/api/tracking/status/:programId",
    ...dashboardMiddleware("Failed to get status", rateLimits.trackingRead, false),
  );
  app.openapi(
    trackingStatusRoute,
    async (c) => {
      const programId = Number(c.req.valid("param").programId);
      await requireProgramAccess(c, programId);
      const { db } = c.get("deps");
      const result = await integrationStatusQuery(db, sql`${programId}::int`);
      const row = result.rows[0];
      if (!row) throw new Error("program with a membership has no row");
      return c.json({ success: true as const, data: integrationStatusFrom(row) }, 200);
    },
    validationHook,
  );
}
