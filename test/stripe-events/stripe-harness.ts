import { createExecutionContext, SELF, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { and, eq, ne, sql } from "drizzle-orm";
import Stripe from "stripe";
import trackingWorker from "../../functions/tracking/index.ts";
import {
  customerProviderIds,
  customers,
  leadEvents,
  notifications,
  paymentAliases,
  programs,
  refunds,
  saleEvents,
  stripeEvents,
  stripePendingPayments,
  stripePendingReversals,
} from "../../schema/index.ts";
import { createProgram, db, freshIp, type ProgramFixture, unique } from "../workers/harness.ts";

export { db, unique };

export const stripe = new Stripe("sk_test_unused", { httpClient: Stripe.createFetchHttpClient() });
const cryptoProvider = Stripe.createSubtleCryptoProvider();

export interface ConnectedProgram extends ProgramFixture {
  accountId: string;
}

/** A fresh program (see `createProgram`) connected to a fresh provider account. */
export async function connectedProgram(
  options: Parameters<typeof createProgram>[0] = {},
): Promise<ConnectedProgram> {
  const p = await createProgram(options);
  const accountId = `acct_${unique("t").replace(/-/g, "")}`;
  await db.update(programs).set({ stripeAccountId: accountId }).where(eq(programs.id, p.programId));
  return { ...p, accountId };
}

// ---- The tracking worker, called in-process (its default export) with this worker's bindings ----

export async function api(
  path: string,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: Record<string, unknown> }> {
  const ctx = createExecutionContext();
  const request = new Request(`https://api.test${path}`, {
    method: "POST",
    headers: { "Content-Type": "application/json", "CF-Connecting-IP": freshIp(), ...headers },
    body: JSON.stringify(body),
  });
  const response = await trackingWorker.fetch(request, env, ctx);
  await waitOnExecutionContext(ctx);
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : {} };
}

export async function click(p: ProgramFixture, link = p.links[0]): Promise<string> {
  const response = await api("/api/v1/track/click", { affiliate_url: `https://shop.example/?aff=${link}` });
  if (response.status !== 200) throw new Error(`click failed: ${JSON.stringify(response.body)}`);
  return response.body.click_id as string;
}

/** A server-mode lead (settled), or without `key` a browser-mode lead (provisional under server_required). */
export async function lead(
  p: ProgramFixture,
  body: { click_id: string; customer_key?: string; email?: string },
  key: string | null = p.apiKey,
) {
  const response = await api("/api/v1/track/lead", body, key ? { Authorization: `Bearer ${key}` } : {});
  if (response.status !== 200) throw new Error(`lead failed: ${JSON.stringify(response.body)}`);
  return response.body;
}

export function saleCall(p: ProgramFixture, body: Record<string, unknown>) {
  return api("/api/v1/track/sale", body, { Authorization: `Bearer ${p.apiKey}` });
}

// ---- Signed events, delivered to this worker ----

export function id(prefix: string): string {
  return `${prefix}_${crypto.randomUUID().replace(/-/g, "").slice(0, 24)}`;
}

export interface StripeEventPayload {
  id: string;
  object: "event";
  api_version: string;
  account?: string;
  created: number;
  livemode: boolean;
  pending_webhooks: number;
  request: { id: string | null; idempotency_key: string | null };
  type: string;
  data: { object: Record<string, unknown>; previous_attributes?: Record<string, unknown> };
}

export function event(
  type: string,
  object: Record<string, unknown>,
  options: { account?: string | null; livemode?: boolean; id?: string } = {},
): StripeEventPayload {
  return {
    id: options.id ?? id("evt"),
    object: "event",
    api_version: "2026-10-28.endive",
    ...(options.account === null ? {} : { account: options.account }),
    created: Math.floor(Date.now() / 1000),
    livemode: options.livemode ?? true,
    pending_webhooks: 1,
    request: { id: null, idempotency_key: null },
    type,
    data: { object },
  };
}

/** Signed by the provider's own SDK, so the worker's verification is checked against the provider's scheme. */
export async function signatureFor(
  payload: string,
  secret = env.STRIPE_WEBHOOK_SECRET,
  timestamp?: number,
): Promise<string> {
  return stripe.webhooks.generateTestHeaderStringAsync({ payload, secret, cryptoProvider, timestamp });
}

export interface Delivery {
  status: number;
  body: Record<string, unknown>;
}

/** Posts the event signed with the worker's secret (or `options.signature`), as the provider does. */
export async function deliver(
  payload: StripeEventPayload | string,
  options: { signature?: string | null; secret?: string } = {},
): Promise<Delivery> {
  const body = typeof payload === "string" ? payload : JSON.stringify(payload);
  const signature =
    options.signature === undefined ? await signatureFor(body, options.secret) : options.signature;
  const response = await SELF.fetch("https://events.test/webhooks/stripe", {
    method: "POST",
    headers: {
      "Content-Type": "application/json; charset=utf-8",
      "User-Agent": "Stripe/1.0 (+https://stripe.com/docs/webhooks)",
      ...(signature === null ? {} : { "Stripe-Signature": signature }),
    },
    body,
  });
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : {} };
}

// ---- Realistic objects (the fields the provider sends that matter here, and a few that do not) ----

export interface Buyer {
  email?: string | null;
  customer?: string | null;
}

export function checkoutSession(
  options: {
    amount?: number;
    currency?: string;
    mode?: "payment" | "subscription" | "setup";
    paymentStatus?: "paid" | "unpaid" | "no_payment_required";
    metadata?: Record<string, string>;
    clientReferenceId?: string | null;
    paymentIntent?: string | null;
    livemode?: boolean;
    tax?: number;
  } & Buyer = {},
): Record<string, unknown> {
  const amount = options.amount ?? 10_000;
  const email = options.email === undefined ? `${unique("buyer")}@example.com` : options.email;
  return {
    id: id("cs_test"),
    object: "checkout.session",
    amount_subtotal: amount - (options.tax ?? 0),
    amount_total: amount,
    client_reference_id: options.clientReferenceId ?? null,
    created: Math.floor(Date.now() / 1000),
    currency: options.currency ?? "usd",
    customer: options.customer === undefined ? id("cus") : options.customer,
    customer_creation: "if_required",
    customer_details: email === null ? null : { email, name: "Jane Buyer", tax_exempt: "none" },
    customer_email: null,
    livemode: options.livemode ?? true,
    metadata: options.metadata ?? {},
    mode: options.mode ?? "payment",
    payment_intent:
      (options.mode ?? "payment") === "payment"
        ? options.paymentIntent === undefined
          ? id("pi")
          : options.paymentIntent
        : null,
    payment_status: options.paymentStatus ?? "paid",
    status: "complete",
    subscription: options.mode === "subscription" ? id("sub") : null,
    total_details: { amount_discount: 0, amount_shipping: 0, amount_tax: options.tax ?? 0 },
    url: null,
  };
}

/**
 * An invoice as the current API version sends it (`parent.subscription_details`, no PaymentIntent), or
 * with `legacy: true` as versions before 2025 did (`subscription_details`, `subscription`, `payment_intent`).
 * `payments` adds the invoice's `payments` list (current versions include it only when asked to).
 */
export function invoice(
  options: {
    amount?: number;
    currency?: string;
    metadata?: Record<string, string>;
    subscription?: string;
    billingReason?: string;
    legacy?: boolean;
    paymentIntent?: string;
    livemode?: boolean;
    product?: string;
    payments?: Array<{ paymentIntent: string; status: "paid" | "open" | "canceled" }>;
  } & Buyer = {},
): Record<string, unknown> {
  const amount = options.amount ?? 2_900;
  const subscription = options.subscription ?? id("sub");
  const metadata = options.metadata ?? {};
  const email = options.email === undefined ? `${unique("buyer")}@example.com` : options.email;
  const product = options.product ?? id("prod");
  const common = {
    id: id("in"),
    object: "invoice",
    amount_due: amount,
    amount_paid: amount,
    amount_remaining: 0,
    billing_reason: options.billingReason ?? "subscription_create",
    collection_method: "charge_automatically",
    currency: options.currency ?? "usd",
    customer: options.customer === undefined ? id("cus") : options.customer,
    customer_email: email,
    livemode: options.livemode ?? true,
    metadata: {},
    status: "paid",
    total: amount,
  };
  if (options.legacy) {
    return {
      ...common,
      charge: id("ch"),
      payment_intent: options.paymentIntent ?? id("pi"),
      subscription,
      subscription_details: { metadata },
      lines: {
        object: "list",
        data: [
          {
            id: id("il"),
            amount,
            price: { id: id("price"), product, recurring: { interval: "month", interval_count: 1 } },
          },
        ],
      },
    };
  }
  return {
    ...common,
    ...(options.payments
      ? {
          payments: {
            object: "list",
            data: options.payments.map((p) => ({
              id: id("inpay"),
              object: "invoice_payment",
              amount_paid: p.status === "paid" ? amount : null,
              is_default: p.status === "paid",
              payment: { type: "payment_intent", payment_intent: p.paymentIntent },
              status: p.status,
            })),
          },
        }
      : {}),
    parent: {
      type: "subscription_details",
      quote_details: null,
      subscription_details: { metadata, subscription },
    },
    lines: {
      object: "list",
      data: [
        {
          id: id("il"),
          amount,
          pricing: { type: "price_details", price_details: { price: id("price"), product } },
        },
      ],
    },
  };
}

/** An `invoice_payment` (the object of `invoice_payment.paid`): which PaymentIntent paid which invoice. */
export function invoicePayment(options: {
  invoiceId: string;
  paymentIntent: string;
  amount?: number;
  status?: "paid" | "open" | "canceled";
}): Record<string, unknown> {
  const amount = options.amount ?? 2_900;
  return {
    id: id("inpay"),
    object: "invoice_payment",
    amount_paid: amount,
    amount_requested: amount,
    created: Math.floor(Date.now() / 1000),
    currency: "usd",
    invoice: options.invoiceId,
    is_default: true,
    livemode: true,
    payment: { type: "payment_intent", payment_intent: options.paymentIntent },
    status: options.status ?? "paid",
    status_transitions: { canceled_at: null, paid_at: Math.floor(Date.now() / 1000) },
  };
}

export function charge(options: {
  paymentIntent: string | null;
  amount: number;
  amountRefunded: number;
  /** Newest first, as the provider lists them. */
  refundIds?: string[];
  /** Each listed refund's amount, in `refundIds`' order; without it the list carries no amounts. */
  refundAmounts?: number[];
  livemode?: boolean;
}): Record<string, unknown> {
  return {
    id: id("ch"),
    object: "charge",
    amount: options.amount,
    amount_captured: options.amount,
    amount_refunded: options.amountRefunded,
    currency: "usd",
    livemode: options.livemode ?? true,
    paid: true,
    payment_intent: options.paymentIntent,
    refunded: options.amountRefunded >= options.amount,
    status: "succeeded",
    ...(options.refundIds
      ? {
          refunds: {
            object: "list",
            data: options.refundIds.map((refundId, index) => ({
              id: refundId,
              object: "refund",
              created: 1_800_000_000 - index,
              ...(options.refundAmounts ? { amount: options.refundAmounts[index], status: "succeeded" } : {}),
            })),
          },
        }
      : {}),
  };
}

export function dispute(options: { paymentIntent: string; amount: number }): Record<string, unknown> {
  return {
    id: id("dp"),
    object: "dispute",
    amount: options.amount,
    charge: id("ch"),
    currency: "usd",
    livemode: true,
    payment_intent: options.paymentIntent,
    reason: "fraudulent",
    status: "needs_response",
  };
}

// ---- Reads ----

export async function salesOf(programId: number) {
  return db.select().from(saleEvents).where(eq(saleEvents.programId, programId)).orderBy(saleEvents.id);
}

export async function saleByPayment(paymentId: string) {
  const [row] = await db.select().from(saleEvents).where(eq(saleEvents.processorEventId, paymentId));
  return row;
}

export async function customersOf(programId: number) {
  return db.select().from(customers).where(eq(customers.programId, programId)).orderBy(customers.id);
}

/** The provider customer ids bound to the program's customers, as `provider id -> customer id`. */
export async function providerIdsOf(programId: number): Promise<Record<string, number>> {
  const rows = await db
    .select()
    .from(customerProviderIds)
    .where(eq(customerProviderIds.programId, programId));
  return Object.fromEntries(rows.map((r) => [r.providerCustomerId, r.customerId]));
}

export async function leadsOf(programId: number) {
  return db.select().from(leadEvents).where(eq(leadEvents.programId, programId)).orderBy(leadEvents.id);
}

export async function refundsOfSale(saleId: number) {
  return db.select().from(refunds).where(eq(refunds.saleId, saleId)).orderBy(refunds.id);
}

export async function eventRow(eventId: string) {
  const [row] = await db.select().from(stripeEvents).where(eq(stripeEvents.eventId, eventId));
  return row;
}

export async function pendingOf(programId: number) {
  return db
    .select()
    .from(stripePendingReversals)
    .where(eq(stripePendingReversals.programId, programId))
    .orderBy(stripePendingReversals.id);
}

/** Moves a click back in time (ages it past a window without a fake clock). */
export async function ageClick(clickId: string, days: number): Promise<void> {
  await db.execute(
    sql`update affiliate_click_events set created_at = now() - make_interval(days => ${days}::int) where click_id = ${clickId}`,
  );
}

/** The program's payments' other ids (not each sale's own id, which the ids index holds as well). */
export async function aliasesOfProgram(programId: number) {
  return db
    .select()
    .from(paymentAliases)
    .where(and(eq(paymentAliases.programId, programId), ne(paymentAliases.alias, paymentAliases.paymentId)))
    .orderBy(paymentAliases.id);
}

export async function keptPaymentsOf(programId: number) {
  return db
    .select()
    .from(stripePendingPayments)
    .where(eq(stripePendingPayments.programId, programId))
    .orderBy(stripePendingPayments.id);
}

export async function notificationsOf(programId: number) {
  return db
    .select()
    .from(notifications)
    .where(eq(notifications.programId, programId))
    .orderBy(notifications.id);
}

/** A trigger that fails writes matching `condition` (on `table`), to break a delivery half-way. */
export async function failingTrigger(
  table: string,
  timing: "before insert" | "before update",
  condition: string,
): Promise<() => Promise<void>> {
  const name = unique("fail").replace(/-/g, "_");
  await db.execute(
    sql.raw(`create function ${name}() returns trigger language plpgsql as $$
      begin
        if ${condition} then raise exception 'injected failure'; end if;
        return new;
      end $$`),
  );
  await db.execute(
    sql.raw(`create trigger ${name} ${timing} on ${table} for each row execute function ${name}()`),
  );
  return async () => {
    await db.execute(sql.raw(`drop trigger ${name} on ${table}`));
    await db.execute(sql.raw(`drop function ${name}()`));
  };
}
