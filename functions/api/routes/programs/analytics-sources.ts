import { createRoute, type OpenAPIHono, z } from "@hono/zod-openapi";
import type { Context } from "hono";
import { parseAnalyticsQuery } from "../../../../lib/analytics/analytics-request.ts";
import { AnalyticsResponseSchema } from "../../../../lib/analytics/analytics-response.ts";
import { readKeyAndReach } from "../../../../lib/analytics/analytics-store.ts";
import { readAnalytics } from "../../../../lib/analytics/read-analytics.ts";
import { evaluateApiKey, type KeyMessages, readinessKeyMessages } from "../../../../lib/auth/program-key.ts";
import { requestCredential } from "../../../../lib/auth/request-credential.ts";
import { platformError } from "../../../../lib/errors/api-error.ts";
import {
  okResponse,
  platformErrorResponse,
  rateLimitedResponse,
} from "../../../../lib/errors/openapi-responses.ts";
import type { AppEnv } from "../../../../lib/http/app-env.ts";
import { errorPolicy } from "../../../../lib/http/dependencies.ts";
import { keyRotationNotice } from "../../../../lib/http/key-rotation-notice.ts";
import { rateLimit } from "../../../../lib/http/rate-limit.ts";
import { requireBearer } from "../../../../lib/http/require-bearer.ts";
import { rateLimits } from "../../../../lib/ratelimit/policies.ts";
import { keyRotationNoticeDocumented } from "../../key-rotation-documented.ts";

/** Readiness's wording, in the platform envelope like the rest of this route's errors. */
const analyticsKeyMessages: KeyMessages = { ...readinessKeyMessages, envelope: "platform" };

const param = (description: string, example?: string) =>
  z
    .string()
    .optional()
    .openapi({ description, ...(example ? { example } : {}) });

export const analyticsSourcesRoute = createRoute({
  ...keyRotationNoticeDocumented,
  method: "get",
  path: "/api/v1/programs/me/analytics/sources",
  tags: ["Programs"],
  summary: "Clicks, leads, sales, refunds and commissions per source",
  description:
    "Bearer program API key; the program is the key's. Rate limit 30 per minute per key. Live events only " +
    "(test events excluded). Money per currency in minor units, never converted. A bad parameter is a 400 " +
    "with `error.details.parameter` naming it.",
  security: [{ bearerAuth: [] }],
  request: {
    query: z.object({
      group_by: param(
        "partner (default), link, referrer_domain, utm_source, utm_medium, utm_campaign, landing_page",
        "utm_source",
      ),
      interval: param(
        "today, yesterday, last_7_days, last_30_days (default), last_90_days, last_365_days, month_to_date, " +
          "year_to_date; not with start/end",
      ),
      start: param("First local date (YYYY-MM-DD) or an ISO 8601 time with offset; with end", "2026-10-01"),
      end: param(
        "Last local date (inclusive) or an ISO 8601 time with offset (exclusive); with start",
        "2026-10-31",
      ),
      timezone: param("IANA time zone: days start at its midnight (default UTC)", "Asia/Kolkata"),
      limit: param("Sources listed, 1 to 100 (default 20); the rest are summed in `other`", "10"),
    }),
  },
  responses: {
    200: okResponse("Sources over the range, with totals", AnalyticsResponseSchema),
    400: platformErrorResponse("A parameter is invalid (`details.parameter` names it)"),
    401: platformErrorResponse("Missing, malformed, empty or unknown key"),
    429: rateLimitedResponse,
    500: platformErrorResponse("Failed to compute analytics. Retry shortly."),
  },
});

export function registerAnalyticsSources(app: OpenAPIHono<AppEnv>): void {
  app.openAPIRegistry.registerPath(analyticsSourcesRoute);
  app.use(
    analyticsSourcesRoute.path,
    errorPolicy("Failed to compute analytics. Retry shortly."),
    rateLimit(rateLimits.analytics),
    keyRotationNotice,
    requireBearer(analyticsKeyMessages),
  );
  app.get(analyticsSourcesRoute.path, handleAnalyticsSources);
}

async function handleAnalyticsSources(c: Context<AppEnv>) {
  const { db, clock, config } = c.get("deps");
  const credential = await requestCredential(c);
  const header = credential.header;
  const keyHash = credential.keyHash ?? "";
  const { key, reach } = await readKeyAndReach(db, keyHash);
  if (key) c.set("authenticatedKeyHash", keyHash);
  const now = clock.now();
  const verdict = evaluateApiKey(header, key, now, analyticsKeyMessages, config.docsUrl);
  if (!verdict.ok) throw verdict.error;
  c.set("keyRotation", verdict.rotation ?? undefined);
  const parsed = parseAnalyticsQuery(c.req.query(), now);
  if (!parsed.ok) {
    // Spec section 7: platform errors other than sale and refund carry no `error.code`.
    throw platformError(400, parsed.error.message, { details: { parameter: parsed.error.parameter } });
  }
  const report = await readAnalytics(db, verdict.programId, parsed.query, reach);
  return c.json({ data: report }, 200);
}
