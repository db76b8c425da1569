import type { BearerHeader } from "../../auth/bearer.ts";
import { type ApiKeyRecord, checkApiKey, type KeyRefusal, type KeyRotation } from "../../auth/program-key.ts";
import {
  type CommissionPlan,
  commissionEligibility,
  type ProductRule,
  type ProgramTerms,
  planCommission,
  policyFor,
} from "../../commissions/commission-policy.ts";
import { type Currency, isSupportedCurrency } from "../../money.ts";
import { type PaymentNamespace, paymentNamespace } from "../../sales/payment-namespace.ts";
import type { StoredEmail } from "../email.ts";
import type { SaleRequest } from "./sale-request.ts";

const dayMs = 86_400_000;

/** A customer as the sale rules see it. */
export interface SaleCustomer {
  id: number;
  programId: number;
  partnerId: number | null;
  clickId: string | null;
  clickedAt: Date | null;
  signedUpAt: Date | null;
  firstConvertedAt: Date | null;
  firstCommissionAt: Date | null;
  /**
   * Whether the row holds a provider customer id, and an email: a payment's own are then not written over it.
   * The provider's path reads it as whether the payment's own provider customer id is bound already
   * (`customer_provider_ids`), since a customer may pay under several.
   */
  hasProviderCustomerId: boolean;
  hasEmail: boolean;
  partnerIsMember: boolean;
}

/** The click a `click_id` resolved to (the visitor's original click when it was a later partner's). */
export interface SaleClick {
  clickId: string;
  programId: number;
  partnerId: number;
  createdAt: Date;
  isTest: boolean;
  partnerIsMember: boolean;
  /** The customer already made from this click, if any. */
  customer: SaleCustomer | null;
}

/** A sale the call's `transaction_id` already names, in the live or the key's test namespace. */
export interface RecordedSale {
  id: number;
  programId: number;
  namespace: PaymentNamespace;
}

export interface SaleFacts {
  key: ApiKeyRecord | null;
  program: SaleProgram | null;
  productRule: ProductRule | null;
  recordedSales: readonly RecordedSale[];
  customerByKey: SaleCustomer | null;
  click: SaleClick | null;
  /**
   * Another program of the key's workspace has a customer under the sent `customer_key` (read only after a
   * first decision refused the sale as `customer_not_found`; unset: not read).
   */
  customerKeyInOtherProgram?: boolean;
}

export interface SaleInput {
  header: BearerHeader;
  body: SaleRequest;
  now: Date;
}

/** The sale row to store, in the units and shapes of `affiliate_sale_events`. */
export interface SaleRow {
  processorEventId: string;
  programId: number;
  partnerId: number | null;
  amountCents: number;
  taxCents: number | null;
  currency: Currency;
  saleType: string;
  lineItems: unknown;
  isRecurring: boolean;
  subscriptionId: string | null;
  subscriptionInterval: string | null;
  productId: string | null;
  occurredAt: Date | null;
  provider: string | null;
  providerPaymentId: string | null;
  livemode: boolean | null;
  isTest: boolean;
  /** Which path recorded it: the sale endpoint (`api`) or the payments provider's events (`stripe`). */
  source: SaleSource;
}

export type SaleSource = "api" | "stripe";

/**
 * What a payment event adds to the customer it converts (the sale endpoint adds none of it): the buyer's
 * provider customer id and email (kept when the customer already has them), and the provisional leads of
 * the customer's click, which the payment settles.
 */
export interface CustomerExtras {
  providerCustomerId?: string | null;
  email?: StoredEmail | null;
  /** Saved on a new customer (from its provisional lead); an existing one keeps its own. */
  customerKey?: string | null;
  /** A new customer's signup (its provisional lead's time); the attribution window is measured to it. */
  signedUpAt?: Date | null;
  /** Mark the open provisional leads of this (program, click) settled, with the customer's id. */
  settleProvisionalOf?: { programId: number; clickId: string } | null;
}

export type CustomerWrite =
  | { kind: "none" }
  | ({
      kind: "create";
      programId: number;
      partnerId: number;
      clickId: string;
      clickedAt: Date;
    } & CustomerExtras)
  | ({
      kind: "update";
      id: number;
      expectedFirstCommissionAt: Date | null;
      /**
       * The row already holds everything this sale would write: converted, its first commission dated, and a
       * provider customer id and an email wherever the call brings one (the conversion keeps the row's own).
       * These are only ever set once (`coalesce`), so no concurrent sale can change what this one decided on,
       * and the write leaves the row alone: a returning customer's sale neither rewrites nor locks it.
       */
      unchanged: boolean;
    } & CustomerExtras);

/**
 * Why a sale is refused, in the order the rules check them. The sale endpoint words each as the spec's
 * status, envelope and message in `lib/sales/sale-outcome-http.ts`; the provider's events log the same words.
 */
export type SaleRefusal =
  | { reason: "key"; refusal: KeyRefusal }
  | { reason: "occurred_at_out_of_range" }
  /** `currency` as sent (the message repeats it). */
  | { reason: "unsupported_currency"; currency: string | null | undefined }
  | { reason: "transaction_id_required" }
  | { reason: "amount_required" }
  /** `saleId`: the recorded sale's, whichever program recorded it (spec section 7). */
  | { reason: "duplicate_transaction"; saleId: number }
  | { reason: "customer_not_found" }
  | { reason: "customer_in_other_program" }
  | { reason: "no_partner_relationship" }
  /** The customer has no partner: the sale is stored, then refused (a resend gives 409). */
  | { reason: "no_partner" };

export type SaleDecision =
  | { outcome: "refused"; refusal: SaleRefusal; rotation: KeyRotation | null }
  | { outcome: "not_attributed"; rotation: KeyRotation | null; message: string }
  | {
      outcome: "record";
      rotation: KeyRotation | null;
      programId: number;
      sale: SaleRow;
      customer: CustomerWrite;
      commission: CommissionPlan | null;
      /** Set when the sale is stored but answers 400 (a customer without a partner). */
      refuseAfterWrite: Extract<SaleRefusal, { reason: "no_partner" }> | null;
      message: string;
      test: boolean;
    };

/**
 * The sale exists, in this program or another (live ids are unique across the service). Spec section 7: the
 * 409 names the recorded sale's id (`error.details.sale_id`), whichever program recorded it.
 */
export function duplicateTransaction(recorded: RecordedSale): SaleRefusal {
  return { reason: "duplicate_transaction", saleId: recorded.id };
}

export function testTransactionId(now: Date): string {
  return `test_txn_${now.getTime()}`;
}

/**
 * The sale rules, in the order the spec's errors are checked: credential, body rules that need the
 * clock, currency, test mode, required fields, duplicate, attribution, window, commission terms.
 *
 * The common sale's rules also run in the database (`record_sale_at_once`, `sale-at-once.ts`): a change here
 * goes there too, or makes it leave the case to this function (`sale-at-once.test.ts` compares the two).
 */
export function decideSale(input: SaleInput, facts: SaleFacts): SaleDecision {
  const { body, now } = input;
  const verdict = checkApiKey(input.header, facts.key, now);
  if (!verdict.ok)
    return { outcome: "refused", refusal: { reason: "key", refusal: verdict.refusal }, rotation: null };
  const rotation = verdict.rotation;
  const refuse = (refusal: SaleRefusal): SaleDecision => ({ outcome: "refused", refusal, rotation });
  const program = facts.program;
  if (!program) throw new Error("the key's program was not read");

  if (!occurredAtInRange(body, now)) return refuse({ reason: "occurred_at_out_of_range" });
  const currency = saleCurrency(body);
  if (!isSupportedCurrency(currency)) {
    return refuse({ reason: "unsupported_currency", currency: body.currency });
  }

  const test = verdict.isTest || testByBody(body);
  if (!test) {
    if (body.transaction_id == null) return refuse({ reason: "transaction_id_required" });
    if (body.amount_cents == null) return refuse({ reason: "amount_required" });
  }
  // The id is taken only within the sale's own namespace: a test sale never uses up a live id.
  const namespace = paymentNamespace(test, program.id);
  const recorded = facts.recordedSales.find((r) => r.namespace === namespace);
  if (recorded) return refuse(duplicateTransaction(recorded));

  const sale: SaleDetails = {
    processorEventId: body.transaction_id ?? testTransactionId(now),
    amountCents: body.amount_cents ?? 0,
    taxCents: body.tax_cents ?? null,
    currency,
    saleType: body.sale_type ?? "payment",
    lineItems: body.line_items ?? null,
    isRecurring: body.is_recurring ?? false,
    subscriptionId: body.subscription_id ?? null,
    subscriptionInterval: body.subscription_interval ?? null,
    productId: body.product_id ?? null,
    occurredAt: body.occurred_at ? new Date(body.occurred_at) : null,
    provider: body.provider ?? null,
    providerPaymentId: body.provider_payment_id ?? null,
    livemode: body.livemode ?? null,
    source: "api",
  };

  if (test) return testSaleDecision(program.id, sale, rotation);

  const resolved = resolveCustomer(facts, program.id);
  if ("refusal" in resolved) return refuse(resolved.refusal);
  return decideAttributedSale({
    program,
    productRule: facts.productRule,
    sale,
    resolution: resolved,
    now,
    rotation,
  });
}

/** `occurred_at`, when sent, is within the last 30 days or the next 5 minutes. */
export function occurredAtInRange(body: SaleRequest, now: Date): boolean {
  if (!body.occurred_at) return true;
  const occurredAt = new Date(body.occurred_at).getTime();
  return occurredAt >= now.getTime() - 30 * dayMs && occurredAt <= now.getTime() + 5 * 60_000;
}

/** The sale's currency as sent, upper-cased; an empty one is treated as omitted, like the other optional fields. */
export function saleCurrency(body: SaleRequest): string {
  return (body.currency?.trim() || "USD").toUpperCase();
}

/** The body makes the sale a test whatever the key: `livemode: false` or `additional_data.test_mode: true`. */
export function testByBody(body: SaleRequest): boolean {
  return body.livemode === false || body.additional_data?.test_mode === true;
}

/** A sale as recorded, before attribution decides its partner (and whether it is a test). */
export type SaleDetails = Omit<SaleRow, "programId" | "partnerId" | "isTest">;

export type SaleProgram = ProgramTerms & { id: number; attributionWindowDays: number; holdDays: number };

/** The customer a sale is attributed to: an existing one, or one to create from a click. */
export interface CustomerResolution {
  customer: Exclude<CustomerWrite, { kind: "none" }>;
  existing: SaleCustomer | null;
  clickedAt: Date | null;
  partnerId: number | null;
  partnerIsMember: boolean;
}

/** A test sale is stored flagged and touches no customer, commission or balance. */
export function testSaleDecision(
  programId: number,
  sale: SaleDetails,
  rotation: KeyRotation | null,
): SaleDecision {
  return {
    outcome: "record",
    rotation,
    programId,
    sale: { ...sale, programId, partnerId: null, isTest: true },
    customer: { kind: "none" },
    commission: null,
    refuseAfterWrite: null,
    message: "Test sale recorded",
    test: true,
  };
}

/**
 * The attribution and commission rules shared by the sale endpoint and the payments provider's events,
 * once each has resolved the customer its own way: a customer without a partner (stored, answers 400), the
 * partner-program relationship, the attribution window until the first conversion, and the commission
 * terms (one-time or recurring, per-product rule, hold period).
 */
export function decideAttributedSale(input: {
  program: SaleProgram;
  productRule: ProductRule | null;
  sale: SaleDetails;
  resolution: CustomerResolution;
  now: Date;
  rotation: KeyRotation | null;
}): SaleDecision {
  const { program, sale, resolution, now, rotation } = input;
  const { customer, clickedAt, partnerId, partnerIsMember } = resolution;
  const row = (partner: number | null): SaleRow => ({
    ...sale,
    programId: program.id,
    partnerId: partner,
    isTest: false,
  });

  if (partnerId === null) {
    // The spec's contract: the sale is stored, so a resend gives 409.
    return {
      outcome: "record",
      rotation,
      programId: program.id,
      sale: row(null),
      customer,
      commission: null,
      refuseAfterWrite: { reason: "no_partner" },
      message: "",
      test: false,
    };
  }
  if (!partnerIsMember) {
    return {
      outcome: "refused",
      refusal: { reason: "no_partner_relationship" },
      rotation,
    };
  }

  const existing = resolution.existing;
  if (!existing?.firstConvertedAt && clickedAt) {
    // Until the first conversion, the click must be within the window of the signup (or of this payment).
    const signedUpAt = existing ? existing.signedUpAt : (customer.signedUpAt ?? null);
    const reference = signedUpAt ?? now;
    if (reference.getTime() - clickedAt.getTime() > program.attributionWindowDays * dayMs) {
      return {
        outcome: "not_attributed",
        rotation,
        message:
          "Sale not attributed: the click is older than the program's attribution window. Nothing was recorded.",
      };
    }
  }

  const policy = policyFor(program, input.productRule);
  const eligibility = commissionEligibility(policy, existing?.firstCommissionAt ?? null, now);
  const commission = eligibility.eligible
    ? planCommission(
        policy,
        { amountCents: sale.amountCents, currency: sale.currency },
        program.holdDays,
        now,
      )
    : null;
  const message = eligibility.eligible
    ? "Sale recorded and commission created"
    : eligibility.reason === "one_time_already_paid"
      ? "Sale recorded; no commission: this program pays a one-time commission, already paid for this customer"
      : "Sale recorded; no commission: the recurring commission period for this customer has ended";
  return {
    outcome: "record",
    rotation,
    programId: program.id,
    sale: row(partnerId),
    customer,
    commission,
    refuseAfterWrite: null,
    message,
    test: false,
  };
}

type Resolution = { refusal: SaleRefusal } | CustomerResolution;

/** The resolution through an existing customer, whatever found it. */
export function resolutionFromCustomer(
  customer: SaleCustomer,
  extras: CustomerExtras = {},
): CustomerResolution {
  return {
    customer: {
      kind: "update",
      id: customer.id,
      expectedFirstCommissionAt: customer.firstCommissionAt,
      unchanged:
        customer.firstConvertedAt !== null &&
        customer.firstCommissionAt !== null &&
        (!extras.providerCustomerId || customer.hasProviderCustomerId) &&
        (!extras.email || customer.hasEmail),
      ...extras,
    },
    existing: customer,
    clickedAt: customer.clickedAt,
    partnerId: customer.partnerId,
    partnerIsMember: customer.partnerIsMember,
  };
}

/** The resolution through a click nobody converted yet: a new customer of the click's partner. */
export function resolutionFromClick(
  click: SaleClick,
  programId: number,
  extras: CustomerExtras = {},
): CustomerResolution {
  return {
    customer: {
      kind: "create",
      programId,
      partnerId: click.partnerId,
      clickId: click.clickId,
      clickedAt: click.createdAt,
      ...extras,
    },
    existing: null,
    clickedAt: click.createdAt,
    partnerId: click.partnerId,
    partnerIsMember: click.partnerIsMember,
  };
}

/** Attribution through `customer_key` first, then `click_id` (spec: sale body). */
function resolveCustomer(facts: SaleFacts, programId: number): Resolution {
  if (facts.customerByKey) return resolutionFromCustomer(facts.customerByKey);
  const click = facts.click;
  if (!click || click.isTest) {
    // Spec section 7: a customer of another program answers "No affiliate attribution found...". A key is the
    // brand's own id, so only a program of the same workspace counts (`customer-key-in-workspace.ts`).
    if (facts.customerKeyInOtherProgram) return { refusal: { reason: "customer_in_other_program" } };
    return { refusal: { reason: "customer_not_found" } };
  }
  if (click.programId !== programId) {
    return { refusal: { reason: "customer_in_other_program" } };
  }
  if (click.customer) return resolutionFromCustomer(click.customer);
  return resolutionFromClick(click, programId);
}
