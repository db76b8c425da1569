import { createRoute, type OpenAPIHono } from "@hono/zod-openapi";
import { saleKeyMessages } from "../../../../lib/auth/program-key.ts";
import { requestCredential } from "../../../../lib/auth/request-credential.ts";
import {
  okResponse,
  payloadTooLargeResponse,
  platformErrorResponse,
  rateLimitedResponse,
} from "../../../../lib/errors/openapi-responses.ts";
import type { AppEnv } from "../../../../lib/http/app-env.ts";
import { limitBody } from "../../../../lib/http/body-limit.ts";
import { errorPolicy } from "../../../../lib/http/dependencies.ts";
import { keyBeforeBodyRefusal } from "../../../../lib/http/key-before-body-refusal.ts";
import { keyRotationNotice } from "../../../../lib/http/key-rotation-notice.ts";
import { rateLimit } from "../../../../lib/http/rate-limit.ts";
import { requireBearer } from "../../../../lib/http/require-bearer.ts";
import { sendingOf } from "../../../../lib/http/sending.ts";
import { rateLimits } from "../../../../lib/ratelimit/policies.ts";
import { recordSale } from "../../../../lib/sales/record-sale.ts";
import { saleResponseBody } from "../../../../lib/sales/sale-outcome-http.ts";
import {
  SaleRequestSchema,
  SaleResponseSchema,
  TestEventResponseSchema,
} from "../../../../lib/tracking/sale/sale-request.ts";
import { keyRotationNoticeDocumented } from "../../key-rotation-documented.ts";

export const saleRoute = createRoute({
  ...keyRotationNoticeDocumented,
  method: "post",
  path: "/api/v1/track/sale",
  tags: ["Tracking"],
  summary: "Record an attributed sale and create the partner commission",
  description:
    "Server-side, Bearer program API key. Rate limit 120 per minute per key, shared with refund. " +
    "A 409 means the sale exists: treat it as success.",
  security: [{ bearerAuth: [] }],
  request: { body: { required: true, content: { "application/json": { schema: SaleRequestSchema } } } },
  responses: {
    200: okResponse(
      "Sale recorded (ids are null when the click is outside the attribution window), or a test sale",
      SaleResponseSchema.or(TestEventResponseSchema),
    ),
    400: platformErrorResponse(
      "Invalid request (`invalid_request`) or no usable attribution (`no_attribution`)",
    ),
    401: platformErrorResponse("Missing, malformed, empty or unknown API key (`unauthorized`)"),
    409: platformErrorResponse(
      "Duplicate transaction_id (`duplicate_transaction`, the recorded sale's id in `details.sale_id`)",
    ),
    422: platformErrorResponse("Unsupported currency (`unsupported_currency`); nothing created"),
    413: payloadTooLargeResponse,
    429: rateLimitedResponse,
    500: platformErrorResponse("Sale tracking failed, or Failed to create commission (`internal_error`)"),
  },
});

export function registerSale(app: OpenAPIHono<AppEnv>): void {
  app.use(
    saleRoute.path,
    errorPolicy("Sale tracking failed", true),
    // The limiter first, so a 413 carries the X-RateLimit-* headers like every answer of the route.
    rateLimit(rateLimits.saleAndRefund),
    limitBody(),
    keyRotationNotice,
    requireBearer(saleKeyMessages),
    keyBeforeBodyRefusal(saleKeyMessages),
  );
  app.openapi(saleRoute, async (c) => {
    const { db, clock, config } = c.get("deps");
    const { header, keyHash } = await requestCredential(c);
    const outcome = await recordSale(
      db,
      { header, keyHash, body: c.req.valid("json"), now: clock.now(), sending: sendingOf(c) },
      c.get("log"),
      (decision, keyFound) => {
        if (keyFound && keyHash) c.set("authenticatedKeyHash", keyHash);
        c.set("keyRotation", decision.rotation ?? undefined);
      },
    );
    return c.json(saleResponseBody(outcome, config.docsUrl), 200);
  });
}
