import type { ProductRule } from "../commissions/commission-policy.ts";
import { isSupportedCurrency } from "../money.ts";
import { saleRefusalMessage } from "../sales/sale-outcome-http.ts";
import type { StoredEmail } from "../tracking/email.ts";
import {
  type CustomerExtras,
  type CustomerResolution,
  type CustomerWrite,
  decideAttributedSale,
  resolutionFromClick,
  resolutionFromCustomer,
  type SaleClick,
  type SaleCustomer,
  type SaleDecision,
  type SaleDetails,
  type SaleProgram,
  testSaleDecision,
} from "../tracking/sale/decide-sale.ts";
import type { AttributionSource, ProviderPayment, ProviderSubscriptionCheckout } from "./provider-events.ts";

/** A click found for a payment, with the earliest open provisional lead of that click (if any). */
export interface ProviderClick extends SaleClick {
  provisionalLead: {
    customerKey: string | null;
    email: StoredEmail | null;
    createdAt: Date;
    /** Another customer of the program already holds this `customer_key`. */
    keyHeld: boolean;
  } | null;
}

/** Everything the attribution of one payment needs (one read, see `provider-sale-store.ts`). */
export interface ProviderSaleFacts {
  program: SaleProgram;
  /**
   * The program's `email_attribution_settled_only`: step 2 then matches only customers (settled leads),
   * never a provisional lead found by the buyer's email, which a partner could have sent with someone
   * else's email (lead steering).
   */
  emailSettledLeadsOnly: boolean;
  productRule: ProductRule | null;
  existingSale: { id: number; programId: number; source: string } | null;
  /** Step 1: metadata `service_click_id`, resolved to the visitor's original click (any program). */
  click: ProviderClick | null;
  /** Step 2: the customer whose lead carried the buyer's email, or a provisional lead's click. */
  customerByEmail: SaleCustomer | null;
  emailLeadClick: ProviderClick | null;
  /** Step 3: the customer the provider customer id is bound to (by an earlier attributed payment or checkout). */
  customerByProviderId: SaleCustomer | null;
  /** Step 4: `client_reference_id` read as a click id. */
  referenceClick: ProviderClick | null;
  /** Step 5: metadata `service_customer_key`: the customer holding it, or a provisional lead's click. */
  customerByKey: SaleCustomer | null;
  keyLeadClick: ProviderClick | null;
  /** `service_customer_key` is known in another program and not in this one. */
  keyElsewhere: boolean;
}

export type AttributionStep =
  | "service_click_id"
  | "email"
  | "provider_customer_id"
  | "client_reference_id"
  | "service_customer_key";

export type ProviderSaleDecision =
  | { outcome: "skipped"; reason: string }
  | { outcome: "duplicate"; saleId: number; source: string }
  /** `noMatch`: no click, lead or customer matched at all (not a window or program mismatch). */
  | { outcome: "not_attributed"; reason: string; noMatch?: true }
  | {
      outcome: "record";
      decision: Extract<SaleDecision, { outcome: "record" }>;
      attributedBy: AttributionStep | null;
    };

/**
 * A payment event's sale: the attribution order of spec section 6, then the same attribution and
 * commission rules as the sale endpoint (`decideAttributedSale`). `email` is the buyer's, already hashed.
 */
export function decideProviderSale(
  payment: ProviderPayment,
  facts: ProviderSaleFacts,
  email: StoredEmail | null,
  context: { eventId: string; now: Date },
): ProviderSaleDecision {
  const { program } = facts;
  if (!isSupportedCurrency(payment.currency)) {
    return { outcome: "skipped", reason: `currency ${payment.currency} is not supported` };
  }
  if (facts.existingSale) {
    return { outcome: "duplicate", saleId: facts.existingSale.id, source: facts.existingSale.source };
  }
  const sale: SaleDetails = {
    processorEventId: payment.paymentId,
    amountCents: payment.amountCents,
    taxCents: payment.taxCents,
    currency: payment.currency,
    saleType: payment.kind === "invoice" ? "subscription" : "payment",
    lineItems: { stripe_object_id: payment.objectId, stripe_event_id: context.eventId },
    isRecurring: payment.kind === "invoice",
    subscriptionId: payment.subscriptionId,
    subscriptionInterval: payment.subscriptionInterval,
    productId: payment.productId,
    occurredAt: null,
    provider: "stripe",
    providerPaymentId: payment.paymentId,
    livemode: payment.livemode,
    source: "stripe",
  };
  if (!payment.livemode) {
    const decision = testSaleDecision(program.id, sale, null);
    if (decision.outcome !== "record") throw new Error("a test sale is always recorded");
    return { outcome: "record", decision, attributedBy: null };
  }

  const mismatch = programMismatch(payment, facts);
  if (mismatch) return { outcome: "not_attributed", reason: mismatch };

  const found = resolveAttribution(payment, facts, email);
  if (!found) return { outcome: "not_attributed", reason: noMatchReason, noMatch: true };
  const decision = decideAttributedSale({
    program,
    productRule: facts.productRule,
    sale,
    resolution: found.resolution,
    now: context.now,
    rotation: null,
  });
  if (decision.outcome === "refused") {
    const refusal = decision.refusal;
    if (refusal.reason === "key") throw new Error("attribution checks no key");
    return { outcome: "not_attributed", reason: saleRefusalMessage(refusal) };
  }
  if (decision.outcome === "not_attributed") return { outcome: "not_attributed", reason: decision.message };
  return { outcome: "record", decision, attributedBy: found.step };
}

const noMatchReason = "no click, lead or customer matches this payment";

/** The three metadata keys must reference the account's program (spec section 6). */
function programMismatch(payment: AttributionSource, facts: ProviderSaleFacts): string | null {
  const { metadata } = payment;
  const programId = facts.program.id;
  if (metadata.programId !== null && metadata.programId !== String(programId)) {
    return `metadata program_id ${metadata.programId} is not the connected account's program ${programId}`;
  }
  if (metadata.clickId !== null && facts.click && facts.click.programId !== programId) {
    return `metadata service_click_id belongs to program ${facts.click.programId}, not ${programId}`;
  }
  if (metadata.customerKey !== null && facts.keyElsewhere && !facts.customerByKey && !facts.keyLeadClick) {
    return `metadata service_customer_key belongs to another program than ${programId}`;
  }
  return null;
}

/** The spec's attribution order over the candidates read; null when nothing matches. */
function resolveAttribution(
  payment: AttributionSource,
  facts: ProviderSaleFacts,
  email: StoredEmail | null,
): { step: AttributionStep; resolution: CustomerResolution } | null {
  const programId = facts.program.id;
  const extras: CustomerExtras = { providerCustomerId: payment.providerCustomerId, email };
  const live = (click: ProviderClick | null) =>
    click && !click.isTest && click.programId === programId ? click : null;
  // The customer row's own `provider_customer_id` is only the first id it paid under: what decides whether the
  // write must bind this payment's id is whether a customer of the program holds it already (a second
  // customer's binding of it would do nothing).
  const providerIdBound = payment.providerCustomerId === null || facts.customerByProviderId !== null;
  const fromCustomer = (customer: SaleCustomer): CustomerResolution =>
    resolutionFromCustomer(
      { ...customer, hasProviderCustomerId: providerIdBound },
      {
        ...extras,
        settleProvisionalOf: customer.clickId ? { programId, clickId: customer.clickId } : null,
      },
    );
  const fromClick = (click: ProviderClick): CustomerResolution => {
    if (click.customer) return fromCustomer(click.customer);
    // A new customer, made as a settling lead would make it: the provisional lead's key, email and time.
    const lead = click.provisionalLead;
    return resolutionFromClick(click, programId, {
      ...extras,
      email: email ?? lead?.email ?? null,
      customerKey: lead && !lead.keyHeld ? lead.customerKey : null,
      signedUpAt: lead?.createdAt ?? null,
      settleProvisionalOf: { programId, clickId: click.clickId },
    });
  };

  const click = live(facts.click);
  if (click) return { step: "service_click_id", resolution: fromClick(click) };
  if (facts.customerByEmail) return { step: "email", resolution: fromCustomer(facts.customerByEmail) };
  const emailLead = facts.emailSettledLeadsOnly ? null : live(facts.emailLeadClick);
  if (emailLead) return { step: "email", resolution: fromClick(emailLead) };
  if (facts.customerByProviderId) {
    return { step: "provider_customer_id", resolution: fromCustomer(facts.customerByProviderId) };
  }
  const reference = payment.metadata.hasClickKey ? null : live(facts.referenceClick);
  if (reference) return { step: "client_reference_id", resolution: fromClick(reference) };
  if (facts.customerByKey) {
    return { step: "service_customer_key", resolution: fromCustomer(facts.customerByKey) };
  }
  const keyLead = live(facts.keyLeadClick);
  if (keyLead) return { step: "service_customer_key", resolution: fromClick(keyLead) };
  return null;
}

export type CustomerBindingDecision =
  | { outcome: "skipped"; reason: string }
  | { outcome: "not_attributed"; reason: string }
  | {
      outcome: "bind";
      customer: Exclude<CustomerWrite, { kind: "none" }>;
      attributedBy: AttributionStep;
    };

/**
 * A subscription checkout records no sale (its invoices do) but binds the buyer: the customer the spec's
 * attribution order finds (made from the click when there is none yet, as a settling lead makes it: status
 * `lead`, the provisional lead's key, email and time, else the checkout's time as the signup) gets the
 * session's provider customer id, so the subscription's invoices, which carry neither the click nor
 * `client_reference_id`, are attributed by it (step 3). The click's provisional leads are settled.
 */
export function decideCustomerBinding(
  checkout: ProviderSubscriptionCheckout,
  facts: ProviderSaleFacts,
  email: StoredEmail | null,
  now: Date,
): CustomerBindingDecision {
  if (!checkout.livemode) {
    return { outcome: "skipped", reason: "test-mode subscription checkout binds no customer" };
  }
  if (!checkout.providerCustomerId) {
    return { outcome: "skipped", reason: "subscription checkout without a provider customer" };
  }
  const mismatch = programMismatch(checkout, facts);
  if (mismatch) return { outcome: "not_attributed", reason: mismatch };
  const found = resolveAttribution(checkout, facts, email);
  if (!found) return { outcome: "not_attributed", reason: noMatchReason };
  const customer = found.resolution.customer;
  return {
    outcome: "bind",
    attributedBy: found.step,
    customer: customer.kind === "create" ? { ...customer, signedUpAt: customer.signedUpAt ?? now } : customer,
  };
}
