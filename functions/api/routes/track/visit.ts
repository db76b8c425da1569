import { createRoute, type OpenAPIHono } from "@hono/zod-openapi";
import {
  okResponse,
  payloadTooLargeResponse,
  platformErrorResponse,
  rateLimitedResponse,
} from "../../../../lib/errors/openapi-responses.ts";
import type { AppEnv } from "../../../../lib/http/app-env.ts";
import { limitBody } from "../../../../lib/http/body-limit.ts";
import { browserCors } from "../../../../lib/http/cors.ts";
import { errorPolicy } from "../../../../lib/http/dependencies.ts";
import { preflightRateLimitHeaders, rateLimit } from "../../../../lib/http/rate-limit.ts";
import { rateLimits } from "../../../../lib/ratelimit/policies.ts";
import { decideVisit } from "../../../../lib/tracking/visit/decide-visit.ts";
import { visitRefusalError } from "../../../../lib/tracking/visit/visit-outcome-http.ts";
import { VisitRequestSchema, VisitResponseSchema } from "../../../../lib/tracking/visit/visit-request.ts";
import { readFactsAndRecordVisit } from "../../../../lib/tracking/visit/visit-store.ts";

export const visitRoute = createRoute({
  method: "post",
  path: "/api/v1/track/visit",
  tags: ["Tracking"],
  // Credential: no credential.
  security: [],
  summary: "Record a page view of a visitor who holds a click id",
  description:
    "Browser-callable, no authentication. Rate limit 120 per minute per IP. The browser tracker sends one " +
    "per page view that is not itself a partner landing. The visit is stored under the visitor's original " +
    "click and its partner; with `program_id`, the click must belong to that program.",
  request: { body: { required: true, content: { "application/json": { schema: VisitRequestSchema } } } },
  responses: {
    200: okResponse("Visit recorded", VisitResponseSchema),
    400: platformErrorResponse("Invalid request, or a click id that names no click (of the program sent)"),
    413: payloadTooLargeResponse,
    429: rateLimitedResponse,
    500: platformErrorResponse("Visit tracking failed"),
  },
});

export function registerVisit(app: OpenAPIHono<AppEnv>): void {
  app.use(
    visitRoute.path,
    errorPolicy("Visit tracking failed"),
    preflightRateLimitHeaders(rateLimits.visit),
    browserCors("POST"),
    // The limiter first, so a 413 carries the X-RateLimit-* headers like every answer of the route.
    rateLimit(rateLimits.visit),
    limitBody(),
  );
  app.openapi(visitRoute, async (c) => {
    const body = c.req.valid("json");
    const { db, clock } = c.get("deps");
    const programId = body.program_id ?? null;
    const facts = await readFactsAndRecordVisit(db, {
      clickId: body.click_id.trim(),
      programId,
      url: body.url.trim(),
      referrer: body.referrer?.trim() || null,
      testMode: body.additional_data?.test_mode === true,
      now: clock.now(),
    });
    if (facts.click) c.set("corsAllowedOrigins", facts.click.allowedOrigins);
    const decision = decideVisit({ programId }, facts);
    if (decision.outcome === "refused") {
      if (facts.recorded) throw new Error("visit recorded although the rules refused it");
      throw visitRefusalError(decision.refusal);
    }
    if (!facts.recorded) throw new Error("visit rules accepted a visit the statement did not record");
    return c.json({ success: true as const }, 200);
  });
}
