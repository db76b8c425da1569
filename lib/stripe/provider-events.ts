import { z } from "zod";
import { hasControlCharacter, nulPathIn } from "../validation/storable-text.ts";

/**
 * The payments provider's events, reduced to what the service records. Parsing is lenient on purpose:
 * a connected account's events come in the API version of the platform's webhook endpoint, so fields moved
 * between versions are read from either place (an invoice's subscription metadata under
 * `parent.subscription_details` or, before 2025, `subscription_details`; its PaymentIntent as
 * `payment_intent` or in `payments`, which current versions do not include by default: then
 * `invoice_payment.paid` names it). Anything we do not understand is skipped, never a 500.
 */

/** The event types the worker acts on; every other type is acknowledged and ignored. */
export const handledEventTypes = [
  "checkout.session.completed",
  "checkout.session.async_payment_succeeded",
  "invoice.paid",
  "invoice.payment_succeeded",
  "invoice_payment.paid",
  "charge.refunded",
  "charge.dispute.created",
] as const;

export type HandledEventType = (typeof handledEventTypes)[number];

export function isHandledEventType(type: string): type is HandledEventType {
  return (handledEventTypes as readonly string[]).includes(type);
}

/** The three metadata keys the brand attaches (spec section 6). */
export interface PaymentMetadata {
  clickId: string | null;
  customerKey: string | null;
  /** As sent (a string); must name the account's program. */
  programId: string | null;
  /** `service_click_id` is present at all: then `client_reference_id` is not read (attribution step 4). */
  hasClickKey: boolean;
}

/** A payment that may become a sale: a paid one-time checkout or a paid subscription invoice. */
export interface ProviderPayment {
  kind: "checkout" | "invoice";
  /** `cs_...` or `in_...`. */
  objectId: string;
  /** The dedupe key shared with the sale endpoint: the PaymentIntent id, else the object id. */
  paymentId: string;
  /**
   * The payment's other ids, recorded as aliases of its sale (`payment_aliases`): the invoice id when an
   * invoice is keyed by its PaymentIntent, the Checkout Session id when a checkout is.
   */
  aliases: string[];
  amountCents: number;
  taxCents: number | null;
  /** Upper case, as the sale endpoint stores it. */
  currency: string;
  livemode: boolean;
  email: string | null;
  providerCustomerId: string | null;
  clientReferenceId: string | null;
  metadata: PaymentMetadata;
  subscriptionId: string | null;
  subscriptionInterval: "monthly" | "quarterly" | "annual" | null;
  productId: string | null;
  /** An invoice's `billing_reason` (`subscription_create` for a subscription's first payment). */
  billingReason: string | null;
}

/** Every id a payment is known by: its dedupe key first, then its aliases. */
export function paymentIdsOf(payment: Pick<ProviderPayment, "paymentId" | "aliases">): string[] {
  return [payment.paymentId, ...payment.aliases.filter((a) => a !== payment.paymentId)];
}

/**
 * A subscription checkout: it records no sale (the invoices do) but binds the buyer to the program's
 * customer, found by the same attribution order, so the invoices are attributed by its provider customer id.
 */
export interface ProviderSubscriptionCheckout {
  sessionId: string;
  subscriptionId: string | null;
  providerCustomerId: string | null;
  email: string | null;
  clientReferenceId: string | null;
  metadata: PaymentMetadata;
  livemode: boolean;
}

/** `invoice_payment.paid`: which PaymentIntent (or charge) paid which invoice. */
export interface ProviderInvoicePayment {
  invoiceId: string;
  /** The PaymentIntent id, or the charge id of a payment made by a bare charge. */
  paymentIds: string[];
  livemode: boolean;
}

/** The fields the attribution order reads (spec section 6), from a payment or a subscription checkout. */
export type AttributionSource = Pick<
  ProviderPayment,
  "metadata" | "providerCustomerId" | "clientReferenceId"
>;

/** A refund or a dispute of a charge: the reversal logic of the refund endpoint runs on it. */
export interface ProviderReversal {
  kind: "refund" | "chargeback";
  /** Where the sale may be recorded: the charge's PaymentIntent id, then the charge id. */
  paymentIds: string[];
  /** The provider's refund id (`re_...`; derived from the charge when the event lists no refund) or dispute id. */
  reversalId: string;
  /**
   * The charge's refunds the event lists with their amounts, oldest first (refunds only; failed and cancelled ones
   * left out): each is applied under its own id, so the refund endpoint sent one of them later finds it applied.
   */
  refunds: ReadonlyArray<{ id: string; amountCents: number }>;
  /** The charge's amount (refund) or the disputed amount (chargeback). */
  chargeAmountCents: number;
  /** The charge's cumulative refunded amount (refund) or the disputed amount (chargeback). */
  refundedTotalCents: number;
  livemode: boolean;
  /** The dispute's reason, when there is one. */
  reason: string | null;
}

export type ClassifiedEvent =
  | { action: "payment"; payment: ProviderPayment }
  | { action: "subscription_checkout"; checkout: ProviderSubscriptionCheckout }
  | { action: "invoice_payment"; invoicePayment: ProviderInvoicePayment }
  | { action: "reversal"; reversal: ProviderReversal }
  | { action: "skip"; reason: string };

const idOf = z
  .union([z.string(), z.looseObject({ id: z.string() }).transform((o) => o.id)])
  .nullish()
  .transform((v) => v ?? null);
const metadataSchema = z
  .record(z.string(), z.unknown())
  .nullish()
  .transform((m) => m ?? {});
const text = z
  .string()
  .nullish()
  .transform((v) => (v && v.trim() !== "" ? v.trim() : null));
const count = z.number().int().nullish();

const sessionSchema = z.looseObject({
  id: z.string(),
  mode: z.string().nullish(),
  payment_status: z.string().nullish(),
  amount_total: count,
  currency: z.string().nullish(),
  livemode: z.boolean().nullish(),
  customer: idOf,
  customer_email: text,
  customer_details: z.looseObject({ email: text }).nullish(),
  client_reference_id: text,
  payment_intent: idOf,
  subscription: idOf,
  metadata: metadataSchema,
  total_details: z.looseObject({ amount_tax: count }).nullish(),
});

const subscriptionDetails = z
  .looseObject({ metadata: metadataSchema, subscription: idOf })
  .nullish()
  .transform((v) => v ?? null);

const invoiceSchema = z.looseObject({
  id: z.string(),
  amount_paid: count,
  currency: z.string().nullish(),
  livemode: z.boolean().nullish(),
  billing_reason: z.string().nullish(),
  customer: idOf,
  customer_email: text,
  payment_intent: idOf,
  subscription: idOf,
  subscription_details: subscriptionDetails,
  parent: z.looseObject({ subscription_details: subscriptionDetails }).nullish(),
  payments: z
    .looseObject({
      data: z
        .array(
          z.looseObject({
            status: z.string().nullish(),
            payment: z
              .looseObject({ type: z.string().nullish(), payment_intent: idOf, charge: idOf })
              .nullish(),
          }),
        )
        .nullish(),
    })
    .nullish(),
  tax: count,
  total_taxes: z.array(z.looseObject({ amount: z.number().int() })).nullish(),
  lines: z
    .looseObject({
      data: z
        .array(
          z.looseObject({
            price: z
              .looseObject({
                product: idOf,
                recurring: z.looseObject({ interval: z.string().nullish(), interval_count: count }).nullish(),
              })
              .nullish(),
            pricing: z.looseObject({ price_details: z.looseObject({ product: idOf }).nullish() }).nullish(),
          }),
        )
        .nullish(),
    })
    .nullish(),
});

const invoicePaymentSchema = z.looseObject({
  id: z.string(),
  invoice: idOf,
  status: z.string().nullish(),
  livemode: z.boolean().nullish(),
  payment: z.looseObject({ type: z.string().nullish(), payment_intent: idOf, charge: idOf }).nullish(),
});

const chargeSchema = z.looseObject({
  id: z.string(),
  amount: z.number().int(),
  amount_refunded: z.number().int(),
  livemode: z.boolean().nullish(),
  payment_intent: idOf,
  refunds: z
    .looseObject({
      data: z
        .array(
          z.looseObject({
            id: z.string(),
            created: count,
            amount: count,
            status: z.string().nullish(),
          }),
        )
        .nullish(),
    })
    .nullish(),
});

const disputeSchema = z.looseObject({
  id: z.string(),
  amount: z.number().int(),
  charge: idOf,
  payment_intent: idOf,
  livemode: z.boolean().nullish(),
  reason: text,
});

function metadataOf(raw: Record<string, unknown>): PaymentMetadata {
  const sent = (key: string) => {
    const v = raw[key];
    return typeof v === "string" && v.trim() !== "" ? v.trim() : null;
  };
  // An identifier holding a control character can match nothing (and Postgres refuses a NUL): absent.
  const value = (key: string) => usableIdentifier(sent(key));
  return {
    clickId: value("service_click_id"),
    customerKey: value("service_customer_key"),
    programId: value("program_id"),
    hasClickKey: sent("service_click_id") !== null,
  };
}

function intervalOf(
  recurring: { interval?: string | null; interval_count?: number | null } | null | undefined,
): ProviderPayment["subscriptionInterval"] {
  const n = recurring?.interval_count ?? 1;
  if (recurring?.interval === "month" && n === 1) return "monthly";
  if (recurring?.interval === "month" && n === 3) return "quarterly";
  if (recurring?.interval === "year" && n === 1) return "annual";
  return null;
}

export interface EventEnvelope {
  id: string;
  type: string;
  livemode: boolean;
  account?: string | null;
  data: { object: unknown };
}

/**
 * Whether a signed body has the outer shape of a provider event: string `id` and `type`, boolean `livemode`,
 * a `data` object, and `account` a string when present (the connected account's id). The provider always
 * sends these; a body without them is acknowledged as ignored rather than failed (a 500 is retried for days).
 * What `data.object` holds is checked per type by `classifyEvent`.
 */
export function isEventEnvelope(value: unknown): value is EventEnvelope {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return false;
  const e = value as Record<string, unknown>;
  return (
    typeof e.id === "string" &&
    typeof e.type === "string" &&
    typeof e.livemode === "boolean" &&
    typeof e.data === "object" &&
    e.data !== null &&
    !Array.isArray(e.data) &&
    (e.account === undefined || e.account === null || typeof e.account === "string")
  );
}

function usableIdentifier(value: string | null): string | null {
  return value !== null && hasControlCharacter(value) ? null : value;
}

/**
 * What the event asks for, or why it is skipped. Only handled types reach here. The buyer's identifiers
 * (email, provider customer, client reference) holding a control character count as absent; any other
 * recorded field holding a NUL (which Postgres refuses) skips the event: failing it would only be retried by
 * the provider for days with the same payload.
 */
export function classifyEvent(event: EventEnvelope): ClassifiedEvent {
  const classified = classifyFields(event);
  const buyer =
    classified.action === "payment"
      ? classified.payment
      : classified.action === "subscription_checkout"
        ? classified.checkout
        : null;
  if (buyer) {
    buyer.email = usableIdentifier(buyer.email);
    buyer.providerCustomerId = usableIdentifier(buyer.providerCustomerId);
    buyer.clientReferenceId = usableIdentifier(buyer.clientReferenceId);
  }
  const nulAt = nulPathIn(classified, "event");
  return nulAt === null ? classified : { action: "skip", reason: `${nulAt} holds a NUL character` };
}

function classifyFields(event: EventEnvelope): ClassifiedEvent {
  const object = event.data.object;
  switch (event.type) {
    case "checkout.session.completed":
    case "checkout.session.async_payment_succeeded": {
      const parsed = sessionSchema.safeParse(object);
      if (!parsed.success) return { action: "skip", reason: "unreadable checkout session" };
      const s = parsed.data;
      if (s.mode === "subscription") {
        // Its payments are recorded from its invoices (spec section 6); the session binds the buyer.
        return {
          action: "subscription_checkout",
          checkout: {
            sessionId: s.id,
            subscriptionId: s.subscription,
            providerCustomerId: s.customer,
            email: s.customer_details?.email ?? s.customer_email,
            clientReferenceId: s.client_reference_id,
            metadata: metadataOf(s.metadata),
            livemode: s.livemode ?? event.livemode,
          },
        };
      }
      if (s.mode !== "payment") {
        return { action: "skip", reason: `checkout mode ${s.mode ?? "unknown"} records no sale` };
      }
      // A delayed payment method completes the checkout unpaid; it is recorded on async_payment_succeeded.
      if (s.payment_status !== "paid") {
        return { action: "skip", reason: `checkout payment_status ${s.payment_status ?? "unknown"}` };
      }
      const amount = s.amount_total ?? 0;
      if (amount <= 0) return { action: "skip", reason: "zero amount" };
      return {
        action: "payment",
        payment: {
          kind: "checkout",
          objectId: s.id,
          paymentId: s.payment_intent ?? s.id,
          // The session id is another name of the payment: a brand's own checkout handler sends it as
          // `transaction_id`, to the sale and the refund endpoints.
          aliases: s.payment_intent && s.payment_intent !== s.id ? [s.id] : [],
          amountCents: amount,
          taxCents: s.total_details?.amount_tax ?? null,
          currency: (s.currency ?? "usd").toUpperCase(),
          livemode: s.livemode ?? event.livemode,
          email: s.customer_details?.email ?? s.customer_email,
          providerCustomerId: s.customer,
          clientReferenceId: s.client_reference_id,
          metadata: metadataOf(s.metadata),
          subscriptionId: null,
          subscriptionInterval: null,
          productId: null,
          billingReason: null,
        },
      };
    }
    case "invoice.paid":
    case "invoice.payment_succeeded": {
      const parsed = invoiceSchema.safeParse(object);
      if (!parsed.success) return { action: "skip", reason: "unreadable invoice" };
      const i = parsed.data;
      const details = i.parent?.subscription_details ?? i.subscription_details;
      const subscriptionId = details?.subscription ?? i.subscription;
      if (!subscriptionId && !i.billing_reason?.startsWith("subscription")) {
        // A one-off invoice (or a checkout's receipt invoice) is not a subscription payment.
        return { action: "skip", reason: "not a subscription invoice" };
      }
      const amount = i.amount_paid ?? 0;
      if (amount <= 0) return { action: "skip", reason: "zero amount" };
      // `payments` (only when included): the paid entry names the PaymentIntent that paid the invoice;
      // without one, an entry not canceled (the legacy reading).
      const intents = (i.payments?.data ?? []).filter(
        (p) => p.payment?.type === "payment_intent" && p.payment.payment_intent,
      );
      const paidIntent = (
        intents.find((p) => p.status === "paid") ?? intents.find((p) => p.status !== "canceled")
      )?.payment?.payment_intent;
      const paymentId = i.payment_intent ?? paidIntent ?? i.id;
      const line = i.lines?.data?.[0];
      const taxes = i.total_taxes?.reduce((sum, t) => sum + t.amount, 0);
      return {
        action: "payment",
        payment: {
          kind: "invoice",
          objectId: i.id,
          paymentId,
          aliases: paymentId === i.id ? [] : [i.id],
          amountCents: amount,
          taxCents: i.tax ?? taxes ?? null,
          currency: (i.currency ?? "usd").toUpperCase(),
          livemode: i.livemode ?? event.livemode,
          email: i.customer_email,
          providerCustomerId: i.customer,
          clientReferenceId: null,
          metadata: metadataOf(details?.metadata ?? {}),
          subscriptionId: subscriptionId ?? null,
          subscriptionInterval: intervalOf(line?.price?.recurring),
          productId: line?.pricing?.price_details?.product ?? line?.price?.product ?? null,
          billingReason: i.billing_reason ?? null,
        },
      };
    }
    case "invoice_payment.paid": {
      const parsed = invoicePaymentSchema.safeParse(object);
      if (!parsed.success) return { action: "skip", reason: "unreadable invoice payment" };
      const p = parsed.data;
      if (p.status !== "paid")
        return { action: "skip", reason: `invoice payment status ${p.status ?? "unknown"}` };
      if (!p.invoice) return { action: "skip", reason: "invoice payment names no invoice" };
      const paymentIds = [p.payment?.payment_intent ?? null, p.payment?.charge ?? null].filter(
        (v): v is string => v !== null,
      );
      if (paymentIds.length === 0) {
        return { action: "skip", reason: `invoice payment of type ${p.payment?.type ?? "unknown"}` };
      }
      return {
        action: "invoice_payment",
        invoicePayment: { invoiceId: p.invoice, paymentIds, livemode: p.livemode ?? event.livemode },
      };
    }
    case "charge.refunded": {
      const parsed = chargeSchema.safeParse(object);
      if (!parsed.success) return { action: "skip", reason: "unreadable charge" };
      const c = parsed.data;
      if (c.amount_refunded <= 0 || c.amount <= 0) return { action: "skip", reason: "nothing refunded" };
      // Oldest first: the provider lists newest first, so reversed before the (stable) sort by creation time,
      // refunds of the same second keep their true order. Failed and cancelled refunds refunded nothing.
      const listed = [...(c.refunds?.data ?? [])]
        .reverse()
        .sort((a, b) => (a.created ?? 0) - (b.created ?? 0))
        .filter((r) => r.status !== "failed" && r.status !== "canceled");
      const latest = listed.at(-1);
      return {
        action: "reversal",
        reversal: {
          kind: "refund",
          paymentIds: [c.payment_intent, c.id].filter((v): v is string => v !== null),
          // Without the refund list (not sent by recent API versions) the cumulative amount names the refund.
          reversalId: latest?.id ?? `${c.id}:refunded:${c.amount_refunded}`,
          refunds: listed.flatMap((r) =>
            r.amount && r.amount > 0 ? [{ id: r.id, amountCents: r.amount }] : [],
          ),
          chargeAmountCents: c.amount,
          refundedTotalCents: c.amount_refunded,
          livemode: c.livemode ?? event.livemode,
          reason: null,
        },
      };
    }
    case "charge.dispute.created": {
      const parsed = disputeSchema.safeParse(object);
      if (!parsed.success) return { action: "skip", reason: "unreadable dispute" };
      const d = parsed.data;
      const paymentIds = [d.payment_intent, d.charge].filter((v): v is string => v !== null);
      if (paymentIds.length === 0) return { action: "skip", reason: "dispute names no charge" };
      return {
        action: "reversal",
        reversal: {
          kind: "chargeback",
          paymentIds,
          reversalId: d.id,
          refunds: [],
          chargeAmountCents: d.amount,
          refundedTotalCents: d.amount,
          livemode: d.livemode ?? event.livemode,
          reason: d.reason,
        },
      };
    }
    default:
      return { action: "skip", reason: `unhandled event type ${event.type}` };
  }
}
