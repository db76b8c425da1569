import { createRoute, type OpenAPIHono } from "@hono/zod-openapi";
import type { Context } from "hono";
import { evaluateApiKey, refundKeyMessages } from "../../../../lib/auth/program-key.ts";
import { requestCredential } from "../../../../lib/auth/request-credential.ts";
import { badRequest } from "../../../../lib/errors/api-error.ts";
import {
  okResponse,
  payloadTooLargeResponse,
  platformErrorResponse,
  rateLimitedResponse,
} from "../../../../lib/errors/openapi-responses.ts";
import type { AppEnv } from "../../../../lib/http/app-env.ts";
import { limitBody } from "../../../../lib/http/body-limit.ts";
import { errorPolicy } from "../../../../lib/http/dependencies.ts";
import { keyRotationNotice } from "../../../../lib/http/key-rotation-notice.ts";
import { rateLimit } from "../../../../lib/http/rate-limit.ts";
import { requireBearer } from "../../../../lib/http/require-bearer.ts";
import { sendingOf } from "../../../../lib/http/sending.ts";
import { rateLimits } from "../../../../lib/ratelimit/policies.ts";
import { type RefundIntent, repeatOf } from "../../../../lib/refunds/decide-refund.ts";
import { refundDecidedAtOnce } from "../../../../lib/refunds/refund-at-once.ts";
import {
  type RefundBody,
  refundResponseBody,
  saleNotFoundError,
} from "../../../../lib/refunds/refund-outcome-http.ts";
import {
  type RefundRequest,
  RefundRequestSchema,
  RefundResponseSchema,
} from "../../../../lib/refunds/refund-request.ts";
import { type RefundPlan, refundSale } from "../../../../lib/refunds/refund-sale.ts";
import { type RefundRead, readRefundFacts } from "../../../../lib/refunds/refund-store.ts";
import { firstIssueMessage } from "../../../../lib/validation/first-issue.ts";
import { assertStorableText, hasNul, unstorableTextIssue } from "../../../../lib/validation/storable-text.ts";
import { keyRotationNoticeDocumented } from "../../key-rotation-documented.ts";

export const refundRoute = createRoute({
  ...keyRotationNoticeDocumented,
  method: "post",
  path: "/api/v1/track/refund",
  tags: ["Tracking"],
  summary: "Reverse or reduce the commission of a tracked sale",
  description:
    "Server-side, Bearer program API key; only sales of the key's program. One call per refund. A test API key " +
    "answers `{success: true, test: true}` before the body is checked; `additional_data.test_mode: true` answers " +
    "the same once the body is valid, refunding nothing. Rate limit 120 per minute per key, shared " +
    "with sale. A 500 can be retried with the same `refund_id`.",
  security: [{ bearerAuth: [] }],
  request: { body: { required: true, content: { "application/json": { schema: RefundRequestSchema } } } },
  responses: {
    200: okResponse(
      "Refund applied, skipped, no commission, or a test (key or test mode)",
      RefundResponseSchema,
    ),
    400: platformErrorResponse("Invalid request (`invalid_request`)"),
    401: platformErrorResponse("Missing, malformed, empty or unknown API key (`unauthorized`)"),
    404: platformErrorResponse("Sale not found for transaction_id (`not_found`)"),
    413: payloadTooLargeResponse,
    429: rateLimitedResponse,
    500: platformErrorResponse("Refund tracking failed (`internal_error`)"),
  },
});

export function registerRefund(app: OpenAPIHono<AppEnv>): void {
  // Registered for the OpenAPI document only: the body is validated in the handler, after the key.
  app.openAPIRegistry.registerPath(refundRoute);
  app.use(
    refundRoute.path,
    errorPolicy("Refund tracking failed", true),
    // The limiter first, so a 413 carries the X-RateLimit-* headers like every answer of the route.
    rateLimit(rateLimits.saleAndRefund),
    limitBody(),
    keyRotationNotice,
    requireBearer(refundKeyMessages),
  );
  app.post(refundRoute.path, handleRefund);
}

async function readJson(c: Context<AppEnv>): Promise<{ ok: true; value: unknown } | { ok: false }> {
  try {
    return { ok: true, value: JSON.parse(await c.req.text()) };
  } catch {
    return { ok: false };
  }
}

function refundIntent(input: RefundRequest): RefundIntent {
  return {
    amountCents: input.refund_amount_cents ?? null,
    // A blank id (trimmed) is no id, as the lead's blank fields are absent: the refund is keyed by its amount.
    // (An id with a lone surrogate is refused with the body, before any write.)
    refundId: input.refund_id || null,
    reason: input.reason ?? "refund",
    refundReason: input.refund_reason ?? null,
  };
}

async function handleRefund(c: Context<AppEnv>) {
  const { db, clock, config } = c.get("deps");
  const credential = await requestCredential(c);
  const header = credential.header;
  const keyHash = credential.keyHash ?? "";
  const raw = await readJson(c);
  const rawTransactionId =
    raw.ok && raw.value && typeof raw.value === "object"
      ? (raw.value as { transaction_id?: unknown }).transaction_id
      : null;
  const now = clock.now();
  // The body is parsed before the read, which needs the refund it would repeat, and its errors are answered
  // after the key's: a bad key answers 401 whatever the body.
  const parsed = raw.ok ? RefundRequestSchema.safeParse(raw.value) : null;
  const repeat =
    parsed?.success && !hasNul(parsed.data.refund_id ?? "") ? repeatOf(refundIntent(parsed.data)) : null;
  // A NUL cannot be a parameter; such an id matches no sale, and the body check below answers 400.
  const transactionId =
    typeof rawTransactionId === "string" && !hasNul(rawTransactionId) ? rawTransactionId.trim() : null;
  /** The key's record, told before any answer: the limiter's memory of it and the rotation notice. */
  const checkedKey = (read: RefundRead) => {
    if (read.key) c.set("authenticatedKeyHash", keyHash);
    const verdict = evaluateApiKey(header, read.key, now, refundKeyMessages, config.docsUrl);
    if (!verdict.ok) throw verdict.error;
    c.set("keyRotation", verdict.rotation ?? undefined);
    return verdict;
  };

  // The common refund, decided and written by the database in one round trip (`refund-at-once.ts`); what it
  // leaves to the rules is decided below on the facts it read, not read again.
  let firstRead: RefundRead | undefined;
  if (
    parsed?.success &&
    repeat !== null &&
    transactionId !== null &&
    keyHash !== "" &&
    parsed.data.additional_data?.test_mode !== true &&
    unstorableTextIssue(parsed.data) === null
  ) {
    const atOnce = await refundDecidedAtOnce(
      db,
      { keyHash, transactionId, intent: refundIntent(parsed.data), now },
      c.get("log"),
      checkedKey,
      sendingOf(c),
    );
    if (atOnce?.outcome) return c.json(refundResponseBody(atOnce.outcome, c.get("log")), 200);
    firstRead = atOnce?.read;
  }

  const result = await refundSale(
    db,
    now,
    async (): Promise<RefundPlan<RefundBody>> => {
      const read = firstRead ?? (await readRefundFacts(db, keyHash, transactionId, repeat, sendingOf(c)));
      firstRead = undefined;
      const verdict = checkedKey(read);
      if (verdict.isTest) return { answer: { success: true as const, test: true as const } };

      if (!parsed) throw badRequest("Malformed JSON in request body");
      if (!parsed.success) throw badRequest(firstIssueMessage(parsed.error));
      assertStorableText(parsed.data);
      // Spec section 1: a test-mode tracking body affects no real commission state. Like a test key's refund,
      // it is answered without touching the sale (the body is checked first, so an integration can test it).
      if (parsed.data.additional_data?.test_mode === true)
        return { answer: { success: true as const, test: true as const } };
      if (!read.facts || !read.parties) throw saleNotFoundError();
      return { refund: { facts: read.facts, parties: read.parties, intent: refundIntent(parsed.data) } };
    },
    // Refunds of one sale serialize on its row: an attempt loses only to another refund of that sale that
    // committed after its read, so N refunds of one sale at once need up to N attempts (the default 8 let
    // the 9th of a burst answer 500).
    { attempts: 32, sending: sendingOf(c) },
  );
  if ("answer" in result) return c.json(result.answer, 200);
  return c.json(refundResponseBody(result.outcome, c.get("log")), 200);
}
