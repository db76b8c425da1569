/**
 * The payments provider's events worker (spec section 6): receives the connected accounts' events at
 * `POST /webhooks/stripe`, verifies their signature on the raw body, and records sales and reversals with
 * the same rules and writes as the sale and refund endpoints. Answers: 400 bad signature (nothing
 * recorded); 200 handled, ignored or replayed; 409 the same event is being processed by another delivery;
 * 500 failure (the provider retries; every write is idempotent, so nothing is doubled).
 *
 * The notifications of the commission transitions an event writes are written with them, in the refund's
 * transaction (`writeRefund`): a retry that finds a refund applied has nothing left to report.
 */
import type Stripe from "stripe";
import { systemClock } from "../../lib/clock.ts";
import { readStripeEventsConfig } from "../../lib/config/env.ts";
import { databaseFor } from "../../lib/db/client.ts";
import { payloadTooLargeMessage, readTextWithin } from "../../lib/http/body-limit.ts";
import { errorFields, rootLogger, scalarFields } from "../../lib/log.ts";
import { claimEvent, completeEvent, failEvent } from "../../lib/stripe/event-claims.ts";
import {
  type Processed,
  processInvoicePayment,
  processPayment,
  processReversal,
  processSubscriptionCheckout,
} from "../../lib/stripe/process-event.ts";
import { classifyEvent, isEventEnvelope, isHandledEventType } from "../../lib/stripe/provider-events.ts";
import { webhookError } from "../../lib/stripe/webhook-errors.ts";
import { verifyWebhookSignature } from "../../lib/stripe/webhook-signature.ts";
import { hasNul } from "../../lib/validation/storable-text.ts";

export interface StripeEventsBindings {
  DATABASE_URL: string;
  NEON_FETCH_ENDPOINT?: string;
  STRIPE_WEBHOOK_SECRET: string;
}

const webhookPath = "/webhooks/stripe";

/**
 * The provider's events are a few KB (lists inside them hold at most 10 entries; metadata at most 50 keys
 * of 500 characters); 256 KB is far above the largest, and keeps a forged flood from being buffered.
 */
const maxEventBytes = 256 * 1024;

function json(status: number, body: Record<string, unknown>): Response {
  return Response.json(body, { status });
}

function log(level: "info" | "warn", msg: string, fields: Record<string, unknown> = {}): void {
  rootLogger[level](msg, scalarFields(fields));
}

async function handleWebhook(request: Request, env: StripeEventsBindings): Promise<Response> {
  const config = readStripeEventsConfig(env);
  const secret = config.stripeWebhookSecret;
  const signature = request.headers.get("stripe-signature");
  const rawBody = await readTextWithin(request, maxEventBytes);
  if (rawBody === null) {
    log("warn", "event refused: body too large", { limit: maxEventBytes });
    return webhookError(413, "payload_too_large", payloadTooLargeMessage(maxEventBytes));
  }
  const check = await verifyWebhookSignature(rawBody, signature, secret, systemClock.now().getTime());
  if (!check.ok) {
    log("warn", "webhook signature rejected", { reason: check.reason });
    return webhookError(400, "invalid_signature", "Webhook signature verification failed");
  }
  // Only the type comes from the provider's SDK: the signed body is the provider's event object.
  let event: Stripe.Event;
  try {
    event = JSON.parse(rawBody) as Stripe.Event;
  } catch (error) {
    // Signed with our secret, so not a forgery: say what is wrong with it (the provider never sends this).
    log("warn", "webhook body is not JSON", errorFields(error));
    return webhookError(400, "invalid_payload", "Webhook body is not valid JSON");
  }

  // A signed body that is not an event object (`null`, a list, no id or type, no boolean `livemode`, no
  // `data` object, an account that is not a string) has nothing to process; reading its fields would throw
  // or write a broken claim and answer 500, which the provider retries for days. Found by fuzzing and audits.
  if (!isEventEnvelope(event)) {
    log("warn", "event ignored: the signed body is not an event object");
    return json(200, { received: true, outcome: "ignored", reason: "not an event object" });
  }
  const fields = { event_id: event.id, type: event.type, account: event.account ?? null };
  if (!isHandledEventType(event.type)) {
    return json(200, { received: true, outcome: "ignored", reason: "event type not handled" });
  }
  const accountId = event.account;
  // The claim stores the id and account; Postgres refuses a NUL, and failing would be retried for days.
  if (hasNul(event.id) || (accountId && hasNul(accountId))) {
    log("warn", "event ignored: NUL character in its id or account");
    return json(200, { received: true, outcome: "ignored", reason: "unreadable event id or account" });
  }
  if (!accountId) {
    log("info", "event ignored: no connected account", fields);
    return json(200, { received: true, outcome: "ignored", reason: "no connected account" });
  }

  const db = databaseFor(config);
  const now = systemClock.now();
  const claim = await claimEvent(db, {
    eventId: event.id,
    type: event.type,
    accountId,
    livemode: event.livemode,
    payload: rawBody,
    now,
  });
  if (claim.kind === "unknown_account") {
    log("info", "event ignored: account connected to no program", fields);
    return json(200, { received: true, outcome: "ignored", reason: "unknown account" });
  }
  if (claim.kind === "completed") {
    return json(200, { received: true, outcome: "already_processed" });
  }
  if (claim.kind === "in_progress") {
    return webhookError(409, "in_progress", "This event is being processed; retry later");
  }

  const ids = { eventId: event.id, programId: claim.programId };
  try {
    const classified = classifyEvent(event);
    let processed: Processed;
    switch (classified.action) {
      case "payment":
        processed = await processPayment(db, ids, classified.payment, now);
        break;
      case "subscription_checkout":
        processed = await processSubscriptionCheckout(db, ids, classified.checkout, now);
        break;
      case "invoice_payment":
        processed = await processInvoicePayment(db, ids, classified.invoicePayment, now);
        break;
      case "reversal":
        processed = await processReversal(db, ids, classified.reversal, now);
        break;
      case "skip":
        log("info", "event skipped", { ...fields, reason: classified.reason });
        processed = { outcome: "skipped", detail: { reason: classified.reason } };
        break;
    }
    await completeEvent(db, event.id, claim.attempts, processed.outcome, now);
    return json(200, { received: true, outcome: processed.outcome, ...processed.detail });
  } catch (error) {
    const logged = rootLogger.with(scalarFields(fields));
    logged.error("event processing failed", error, { attempt: claim.attempts });
    // The stored cause is the logged one: codes, never the error's message (it can quote SQL parameters).
    await failEvent(db, event.id, claim.attempts, JSON.stringify(errorFields(error))).catch(
      (failure: unknown) => logged.error("could not mark the event failed", failure),
    );
    return webhookError(500, "internal_error", "Event processing failed");
  }
}

export default {
  async fetch(request, env) {
    const url = new URL(request.url);
    if (url.pathname !== webhookPath) return webhookError(404, "not_found", "Not found");
    if (request.method !== "POST") {
      return webhookError(405, "method_not_allowed", "Use POST", { Allow: "POST" });
    }
    try {
      return await handleWebhook(request, env);
    } catch (error) {
      rootLogger.error("webhook failed", error);
      return webhookError(500, "internal_error", "Event processing failed");
    }
  },
} satisfies ExportedHandler<StripeEventsBindings>;
