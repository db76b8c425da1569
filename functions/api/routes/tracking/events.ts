import { createRoute, type OpenAPIHono, z } from "@hono/zod-openapi";
import { EventsPageSchema, ProgramPathSchema } from "../../../../lib/dashboard/dashboard-schemas.ts";
import { maxEventLimit, parseEventsQuery } from "../../../../lib/dashboard/events-query.ts";
import { readRecentEvents } from "../../../../lib/dashboard/recent-events.ts";
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

export const trackingEventsRoute = createRoute({
  method: "get",
  path: "/api/tracking/events/{programId}",
  tags: ["Dashboard"],
  summary: "Recent clicks, leads, sales and refunds, newest first",
  description:
    "Dashboard session with an active membership on the program's workspace. Newest first across the kinds " +
    "(ties: refund, sale, lead, click, then the higher id); test events are included and marked `test: true` " +
    "unless `mode` says otherwise. Cursor-paginated: pass `next_cursor` as `cursor`; pages are stable while " +
    "new events arrive. Rate limit 120 per minute per sign-in token (shared by the dashboard reads).",
  security: sessionSecurity,
  request: {
    params: ProgramPathSchema,
    query: z.object({
      kind: param("Comma-separated subset of click, lead, sale, refund (default all)", "sale,refund"),
      mode: param("all (default), live or test", "test"),
      limit: param(`Events per page, 1 to ${maxEventLimit} (default 50)`, "20"),
      cursor: param("`next_cursor` of the previous page"),
    }),
  },
  responses: {
    200: okResponse("One page of events", EventsPageSchema),
    ...dashboardErrors,
    500: platformErrorResponse("Failed to list events"),
  },
});

export function registerTrackingEvents(app: OpenAPIHono<AppEnv>): void {
  app.use(
    "/api/tracking/events/:programId",
    ...dashboardMiddleware("Failed to list events", rateLimits.trackingRead, false),
  );
  app.openapi(
    trackingEventsRoute,
    async (c) => {
      const programId = Number(c.req.valid("param").programId);
      const parsed = parseEventsQuery(c.req.query());
      await requireProgramAccess(c, programId);
      if (!parsed.ok) throw invalidParameter(parsed.error.parameter, parsed.error.message);
      const page = await readRecentEvents(c.get("deps").db, programId, parsed.query);
      return c.json({ success: true as const, data: page }, 200);
    },
    validationHook,
  );
}
