import { createRoute, type OpenAPIHono, z } from "@hono/zod-openapi";
import { requestCredential } from "../../../../lib/auth/request-credential.ts";
import {
  okResponse,
  payloadTooLargeResponse,
  platformErrorResponse,
  rateLimitedResponse,
} from "../../../../lib/errors/openapi-responses.ts";
import { deviceHashes } from "../../../../lib/fraud/device-hash.ts";
import type { AppEnv } from "../../../../lib/http/app-env.ts";
import { limitBody } from "../../../../lib/http/body-limit.ts";
import { clientIp } from "../../../../lib/http/client-ip.ts";
import { browserCors } from "../../../../lib/http/cors.ts";
import { errorPolicy } from "../../../../lib/http/dependencies.ts";
import { preflightRateLimitHeaders, rateLimit } from "../../../../lib/http/rate-limit.ts";
import { sendingOf } from "../../../../lib/http/sending.ts";
import { newClickId } from "../../../../lib/ids.ts";
import { rateLimits } from "../../../../lib/ratelimit/policies.ts";
import { clickRefusalError } from "../../../../lib/tracking/click/click-outcome-http.ts";
import {
  ClickRequestSchema,
  ClickResponseSchema,
  referralCodeOf,
} from "../../../../lib/tracking/click/click-request.ts";
import { readFactsAndRecordClick } from "../../../../lib/tracking/click/click-store.ts";
import { decideClick } from "../../../../lib/tracking/click/decide-click.ts";
import { comparableProgramId } from "../../../../lib/validation/database-limits.ts";

const LinkDisabled = z
  .object({
    success: z.literal(false),
    message: z.string(),
    hint: z.string(),
    error: z.object({ code: z.literal("link_disabled"), message: z.string(), hint: z.string() }),
  })
  .openapi("LinkDisabled");

export const clickRoute = createRoute({
  method: "post",
  path: "/api/v1/track/click",
  tags: ["Tracking"],
  // Credential: no credential (an optional Bearer key only selects test mode checks).
  security: [],
  summary: "Record a click on a partner's referral link",
  description:
    "Browser-callable, no authentication. Rate limit 60 per minute per IP. First click: send the visitor's " +
    "existing click id as `click_id`; a click through another partner's link of the same program is logged " +
    "for that partner and the original id is returned. The user agent is stored (for reporting); the " +
    "visitor's address is not: it is kept only as a keyed hash, as is the user agent's, for the fraud " +
    "signals (README, Fraud signals).",
  request: { body: { required: true, content: { "application/json": { schema: ClickRequestSchema } } } },
  responses: {
    200: okResponse("Click recorded", ClickResponseSchema),
    400: platformErrorResponse(
      "Invalid request, unknown program or link, or a link without partner or program",
    ),
    403: platformErrorResponse("Test mode with a Bearer key of another program"),
    410: {
      description: "The link was turned off; no click recorded",
      content: { "application/json": { schema: LinkDisabled } },
    },
    413: payloadTooLargeResponse,
    429: rateLimitedResponse,
    500: platformErrorResponse("Click tracking failed"),
  },
});

export function registerClick(app: OpenAPIHono<AppEnv>): void {
  app.use(
    clickRoute.path,
    errorPolicy("Click tracking failed"),
    preflightRateLimitHeaders(rateLimits.click),
    browserCors("POST"),
    // The limiter first, so a 413 carries the X-RateLimit-* headers like every answer of the route.
    rateLimit(rateLimits.click),
    limitBody(),
  );
  app.openapi(clickRoute, async (c) => {
    const body = c.req.valid("json");
    const { db, clock, config } = c.get("deps");
    const affiliateUrl = body.affiliate_url.trim();
    const testMode = body.additional_data?.test_mode === true;
    // Compared with the key's program before it is looked up: another program's id, even one no program can
    // have, gives 403 in test mode with a key, as the spec says.
    const eventProgramId = comparableProgramId(body.additional_data?.program_id);
    const { keyHash } = await requestCredential(c);
    const intent = {
      requestedProgramId: body.program_id ?? eventProgramId,
      eventProgramId,
      testMode,
      newClickId: newClickId(),
    };
    const userAgent = c.req.header("User-Agent")?.slice(0, 512) ?? null;
    const facts = await readFactsAndRecordClick(
      db,
      {
        code: referralCodeOf(affiliateUrl) as string,
        requestedProgramId: intent.requestedProgramId,
        eventProgramId,
        keyHash,
        visitorClickId: body.click_id ?? null,
        testMode,
        newClickId: intent.newClickId,
        affiliateUrl,
        referrer: body.referrer ?? null,
        userAgent,
        device: await deviceHashes(config.deviceHashKey, clientIp(c), userAgent),
        now: clock.now(),
      },
      sendingOf(c),
    );
    c.set("corsAllowedOrigins", facts.link?.allowedOrigins ?? undefined);
    const decision = decideClick(intent, facts);
    if (decision.outcome === "refused") {
      if (facts.recorded) throw new Error("click recorded although the rules refused it");
      throw clickRefusalError(decision.refusal);
    }
    if (!facts.recorded) throw new Error("click rules accepted a click the statement did not record");
    return c.json(
      { success: true as const, click_id: decision.clickId, cookie_window_days: decision.cookieWindowDays },
      200,
    );
  });
}
