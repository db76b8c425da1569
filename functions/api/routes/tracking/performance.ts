import { createRoute, type OpenAPIHono, z } from "@hono/zod-openapi";
import { PerformanceSchema, ProgramPathSchema } from "../../../../lib/dashboard/dashboard-schemas.ts";
import { parsePerformanceQuery, readPerformance } from "../../../../lib/dashboard/performance.ts";
import { okResponse, platformErrorResponse } from "../../../../lib/errors/openapi-responses.ts";
import type { AppEnv } from "../../../../lib/http/app-env.ts";
import { rateLimits } from "../../../../lib/ratelimit/policies.ts";
import {
  dashboardErrors,
  dashboardMiddleware,
  invalidParameter,
  requireProgramAccess,
  sessionSecurity,
  validationHook,
} from "./access.ts";

const param = (description: string, example?: string) =>
  z
    .string()
    .optional()
    .openapi({ description, ...(example ? { example } : {}) });

export const trackingPerformanceRoute = createRoute({
  method: "get",
  path: "/api/tracking/performance/{programId}",
  tags: ["Dashboard"],
  summary: "Totals, a per-day series in the brand's time zone, and figures per partner",
  description:
    "Dashboard session with an active membership on the program's workspace. Live events only (test events " +
    "excluded), as in analytics by source, whose range parameters and rules this route shares. `series` has " +
    "one point per local day of the range, zeros included. Money per currency in minor units, never " +
    "converted. Rate limit 120 per minute per sign-in token (shared by the dashboard reads).",
  security: sessionSecurity,
  request: {
    params: ProgramPathSchema,
    query: z.object({
      interval: param(
        "today, yesterday, last_7_days, last_30_days (default), last_90_days, last_365_days, month_to_date, " +
          "year_to_date; not with start/end",
      ),
      start: param("First local date (YYYY-MM-DD) or an ISO 8601 time with offset; with end", "2026-10-01"),
      end: param("Last local date (inclusive) or an ISO 8601 time with offset (exclusive)", "2026-10-31"),
      timezone: param("IANA time zone: days start at its midnight (default UTC)", "Europe/Paris"),
      limit: param("Partners listed, 1 to 100 (default 20); the rest are summed in `other_partners`", "10"),
    }),
  },
  responses: {
    200: okResponse("Performance over the range", PerformanceSchema),
    ...dashboardErrors,
    500: platformErrorResponse("Failed to compute performance. Retry shortly."),
  },
});

export function registerTrackingPerformance(app: OpenAPIHono<AppEnv>): void {
  app.use(
    "/api/tracking/performance/:programId",
    ...dashboardMiddleware("Failed to compute performance. Retry shortly.", rateLimits.trackingRead, false),
  );
  app.openapi(
    trackingPerformanceRoute,
    async (c) => {
      const programId = Number(c.req.valid("param").programId);
      const { db, clock } = c.get("deps");
      const parsed = parsePerformanceQuery(c.req.query(), clock.now());
      await requireProgramAccess(c, programId);
      if (!parsed.ok) throw invalidParameter(parsed.error.parameter, parsed.error.message);
      const report = await readPerformance(db, programId, parsed.query);
      return c.json({ success: true as const, data: report }, 200);
    },
    validationHook,
  );
}
