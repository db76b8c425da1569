import { createRoute, type OpenAPIHono } from "@hono/zod-openapi";
import { sha256Hex } from "../../../../lib/auth/api-keys.ts";
import { parseBearer } from "../../../../lib/auth/bearer.ts";
import { saleKeyMessages } from "../../../../lib/auth/program-key.ts";
import { requireBearer } from "../../../../lib/auth/require-bearer.ts";
import { keyRotationNotice } from "../../../../lib/auth/rotation-notice.ts";
import {
  isDeterministicDatabaseError,
  isGuardFailure,
  isUniqueViolation,
  withConflictRetry,
} from "../../../../lib/db/errors.ts";
import { type ApiError, platformError } from "../../../../lib/errors/api-error.ts";
import {
  okResponse,
  payloadTooLargeResponse,
  platformErrorResponse,
  rateLimitedResponse,
} from "../../../../lib/errors/openapi-responses.ts";
import type { AppEnv } from "../../../../lib/http/app-env.ts";
import { limitBody } from "../../../../lib/http/body-limit.ts";
import { errorPolicy } from "../../../../lib/http/dependencies.ts";
import { rateLimit } from "../../../../lib/ratelimit/middleware.ts";
import { rateLimits } from "../../../../lib/ratelimit/policies.ts";
import { decideSale, type SaleDecision } from "../../../../lib/tracking/sale/decide-sale.ts";
import {
  SaleRequestSchema,
  SaleResponseSchema,
  TestEventResponseSchema,
} from "../../../../lib/tracking/sale/sale-request.ts";
import { existingSaleId, readSaleFacts, writeSale } from "../../../../lib/tracking/sale/sale-store.ts";

const saleUniqueConstraint = "affiliate_sale_events_processor_event_id_unique";

export const saleRoute = createRoute({
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
    401: platformErrorResponse("Missing, malformed, unknown or retired API key (`unauthorized`)"),
    409: platformErrorResponse("Duplicate transaction_id (`duplicate_transaction`, `details.sale_id`)"),
    422: platformErrorResponse("Unsupported currency (`unsupported_currency`); nothing created"),
    413: payloadTooLargeResponse,
    429: rateLimitedResponse,
    500: platformErrorResponse("Sale tracking failed, or Failed to create commission (`internal_error`)"),
  },
});

function duplicate(saleId: number | null): ApiError {
  return platformError(409, "Duplicate transaction_id. This sale has already been recorded.", {
    code: "duplicate_transaction",
    details: { sale_id: saleId },
  });
}

export function registerSale(app: OpenAPIHono<AppEnv>): void {
  app.use(
    saleRoute.path,
    errorPolicy("Sale tracking failed", true),
    limitBody(),
    rateLimit(rateLimits.saleAndRefund),
    keyRotationNotice,
    requireBearer(saleKeyMessages),
  );
  app.openapi(saleRoute, async (c) => {
    const body = c.req.valid("json");
    const { db, clock, config } = c.get("deps");
    const header = parseBearer(c.req.header("Authorization"));
    const keyHash = header.kind === "token" ? await sha256Hex(header.token) : null;
    let now = clock.now();

    const outcome = await withConflictRetry(
      async () => {
        const facts = await readSaleFacts(db, {
          keyHash,
          transactionId: body.transaction_id ?? null,
          customerKey: body.customer_key ?? null,
          clickId: body.click_id ?? null,
          productId: body.product_id ?? null,
        });
        if (facts.key && keyHash) c.set("authenticatedKeyHash", keyHash);
        const decision = decideSale({ header, body, now, docsUrl: config.docsUrl }, facts);
        c.set("keyRotation", decision.rotation ?? undefined);
        if (decision.outcome !== "record") return { decision, ids: null };
        try {
          return { decision, ids: await writeSale(db, decision, now) };
        } catch (error) {
          if (isUniqueViolation(error, saleUniqueConstraint)) {
            if (decision.test && body.transaction_id === undefined) {
              // Two generated test ids in the same millisecond: take the next one.
              now = new Date(now.getTime() + 1);
              throw error;
            }
            throw duplicate(await existingSaleId(db, decision.sale.processorEventId));
          }
          if (isGuardFailure(error) || !decision.commission || !isDeterministicDatabaseError(error))
            throw error;
          // The database refused the batch. If the sale and customer alone can be written, it was the
          // commission part that failed: keep the spec's contract (the sale is stored, its transaction_id
          // consumed, a retry gives 409), flag it, and the scheduled repair creates the commission later.
          // Transient failures (network, serialization) are rethrown: `Sale tracking failed`, retryable.
          console.error(
            JSON.stringify({
              level: "error",
              msg: "commission write failed",
              request_id: c.get("requestId"),
              error: String(error),
            }),
          );
          await writeSale(db, decision, now, { withCommission: false });
          throw platformError(500, "Failed to create commission");
        }
      },
      { retryOnConstraints: [saleUniqueConstraint] },
    );

    return respond(outcome.decision, outcome.ids, c);
  });
}

function respond(
  decision: SaleDecision,
  ids: { saleId: number; commissionId: number | null } | null,
  c: Parameters<Parameters<OpenAPIHono<AppEnv>["openapi"]>[1]>[0],
) {
  if (decision.outcome === "refused") throw decision.error;
  if (decision.outcome === "not_attributed") {
    return c.json(
      { success: true as const, sale_id: null, commission_id: null, message: decision.message },
      200,
    );
  }
  if (!ids) throw new Error("recorded sale without ids");
  if (decision.refuseAfterWrite) throw decision.refuseAfterWrite;
  if (decision.test) {
    return c.json(
      {
        success: true as const,
        message: decision.message,
        data: { eventId: ids.saleId, programId: decision.programId, test_mode: true as const },
      },
      200,
    );
  }
  return c.json(
    {
      success: true as const,
      sale_id: ids.saleId,
      commission_id: ids.commissionId,
      message: decision.message,
    },
    200,
  );
}
