import { createRoute, type OpenAPIHono } from "@hono/zod-openapi";
import { sha256Hex } from "../../../../lib/auth/api-keys.ts";
import { parseBearer } from "../../../../lib/auth/bearer.ts";
import { leadKeyMessages } from "../../../../lib/auth/program-key.ts";
import { withConflictRetry } from "../../../../lib/db/errors.ts";
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
import { keyBeforeBodyRefusal } from "../../../../lib/http/key-before-body-refusal.ts";
import { keyRotationNotice } from "../../../../lib/http/key-rotation-notice.ts";
import { preflightRateLimitHeaders, rateLimit } from "../../../../lib/http/rate-limit.ts";
import { sendingOf } from "../../../../lib/http/sending.ts";
import { rateLimits } from "../../../../lib/ratelimit/policies.ts";
import { storedEmail } from "../../../../lib/tracking/email.ts";
import {
  decideLead,
  type LeadDecision,
  type LeadFacts,
  type LeadIntent,
  precheckLead,
  testLeadBody,
} from "../../../../lib/tracking/lead/decide-lead.ts";
import { leadDecidedAtOnce, leadMayBeDecidedAtOnce } from "../../../../lib/tracking/lead/lead-at-once.ts";
import { leadRefusalError } from "../../../../lib/tracking/lead/lead-outcome-http.ts";
import {
  LeadRequestSchema,
  type LeadResponse,
  LeadResponseSchema,
} from "../../../../lib/tracking/lead/lead-request.ts";
import {
  leadConflictConstraints,
  readLeadFacts,
  writeLead,
} from "../../../../lib/tracking/lead/lead-store.ts";
import { comparableProgramId } from "../../../../lib/validation/database-limits.ts";
import { keyRotationNoticeDocumented } from "../../key-rotation-documented.ts";

/** `{}` first: no credential is an accepted alternative (OpenAPI's way to say the Bearer key is optional). */
const optionalBearer: Record<string, string[]>[] = [{}, { bearerAuth: [] }];

export const leadRoute = createRoute({
  ...keyRotationNoticeDocumented,
  method: "post",
  path: "/api/v1/track/lead",
  tags: ["Tracking"],
  // Credential: none (browser mode) or a Bearer program key (server mode).
  security: optionalBearer,
  summary: "Record a lead (signup) and link the customer to the click",
  description:
    "Rate limit 30 per minute per IP. Server mode with `Authorization: Bearer <API_KEY>`: the lead settles " +
    "and the customer must belong to the key's program. Browser mode (no Authorization header, or an empty " +
    "Bearer): `click_id` is required; under the program's `server_required` policy (the default) the lead " +
    "is stored as provisional until the server confirms it. `additional_data.test_mode` records a test lead. " +
    "A browser lead keeps the sender's address and user agent as keyed hashes only, for the fraud signals.",
  request: { body: { required: true, content: { "application/json": { schema: LeadRequestSchema } } } },
  responses: {
    200: okResponse("Lead recorded (settled, provisional, or test)", LeadResponseSchema),
    400: platformErrorResponse(
      "Invalid request, no customer found, customer of another program, or a customer whose status " +
        "cannot become lead",
    ),
    401: platformErrorResponse("Malformed Authorization header or unknown API token"),
    403: platformErrorResponse(
      "Test mode with a Bearer key and another program's `additional_data.program_id`",
    ),
    413: payloadTooLargeResponse,
    429: rateLimitedResponse,
    500: platformErrorResponse("Lead tracking failed"),
  },
});

/** Empty strings count as absent: a tracker without a cookie may send `""`. */
const present = (value: string | null | undefined): string | null =>
  value === undefined || value === null || value.trim() === "" ? null : value;

export function registerLead(app: OpenAPIHono<AppEnv>): void {
  app.use(
    leadRoute.path,
    errorPolicy("Lead tracking failed"),
    preflightRateLimitHeaders(rateLimits.lead),
    browserCors("POST"),
    // The limiter first, so a 413 carries the X-RateLimit-* headers like every answer of the route.
    rateLimit(rateLimits.lead),
    limitBody(),
    keyRotationNotice,
    keyBeforeBodyRefusal(leadKeyMessages),
  );
  app.openapi(leadRoute, async (c) => {
    const body = c.req.valid("json");
    const { db, clock, config } = c.get("deps");
    const header = parseBearer(c.req.header("Authorization"));
    const email = present(body.email);
    const intent: LeadIntent = {
      header,
      clickId: present(body.click_id),
      customerKey: present(body.customer_key),
      email: email === null ? null : await storedEmail(email),
      requestedProgramId: comparableProgramId(body.program_id),
      eventProgramId: comparableProgramId(body.additional_data?.program_id),
      testMode: body.additional_data?.test_mode === true,
      eventName: present(body.additional_data?.event_name),
      now: clock.now(),
    };
    const early = precheckLead(intent);
    if (early) throw leadRefusalError(early, config.docsUrl);
    const keyHash = header.kind === "token" ? await sha256Hex(header.token) : null;
    // Only a browser lead's device is the customer's: a keyed lead comes from the brand's server.
    const device =
      header.kind === "token"
        ? null
        : await deviceHashes(
            config.deviceHashKey,
            clientIp(c),
            c.req.header("User-Agent")?.slice(0, 512) ?? null,
          );

    /** The decision's key notice and CORS origins, for whatever the answer is. */
    const noted = (decision: LeadDecision) => {
      c.set("keyRotation", decision.rotation ?? undefined);
      if (decision.allowedOrigins) c.set("corsAllowedOrigins", decision.allowedOrigins);
    };

    // The common lead, decided and written by the database in one round trip (`lead-at-once.ts`); what it
    // leaves to the rules is decided below on the facts it read, not read again.
    let factsRead: LeadFacts | undefined;
    if (leadMayBeDecidedAtOnce(intent)) {
      const atOnce = await leadDecidedAtOnce(
        db,
        { intent, keyHash, device },
        c.get("log"),
        noted,
        sendingOf(c),
      );
      if (atOnce && "decision" in atOnce) return c.json(atOnce.decision.body, 200);
      factsRead = atOnce?.facts;
    }

    const response: LeadResponse = await withConflictRetry(
      async () => {
        const facts =
          factsRead ??
          (await readLeadFacts(
            db,
            {
              keyHash,
              clickId: intent.clickId,
              customerKey: intent.customerKey,
              explicitProgramId: intent.eventProgramId ?? intent.requestedProgramId,
            },
            sendingOf(c),
          ));
        factsRead = undefined;
        const decision = decideLead(intent, facts);
        noted(decision);
        if (decision.outcome === "refused") throw leadRefusalError(decision.refusal, config.docsUrl);
        const { leadEventId } = await writeLead(db, decision.write, device, sendingOf(c));
        return decision.outcome === "test" ? testLeadBody(leadEventId, decision.programId) : decision.body;
      },
      { retryOnConstraints: leadConflictConstraints },
    );
    return c.json(response, 200);
  });
}
