import type { BearerHeader } from "../../auth/bearer.ts";
import {
  type ApiKeyRecord,
  evaluateApiKey,
  type KeyRotation,
  saleKeyMessages,
} from "../../auth/program-key.ts";
import {
  type CommissionPlan,
  commissionEligibility,
  type ProductRule,
  type ProgramTerms,
  planCommission,
  policyFor,
} from "../../commissions/commission-policy.ts";
import { type ApiError, platformError } from "../../errors/api-error.ts";
import { type Currency, isSupportedCurrency } from "../../money.ts";
import { occurredAtMessage, type SaleRequest, saleRequiredMessages } from "./sale-request.ts";

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

export interface SaleFacts {
  key: ApiKeyRecord | null;
  program: (ProgramTerms & { id: number; attributionWindowDays: number; holdDays: number }) | null;
  productRule: ProductRule | null;
  existingSaleId: number | null;
  customerByKey: SaleCustomer | null;
  click: SaleClick | null;
}

export interface SaleInput {
  header: BearerHeader;
  body: SaleRequest;
  now: Date;
  docsUrl: string;
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
}

export type CustomerWrite =
  | { kind: "none" }
  | { kind: "create"; programId: number; partnerId: number; clickId: string; clickedAt: Date }
  | { kind: "update"; id: number; expectedFirstCommissionAt: Date | null };

export type SaleDecision =
  | { outcome: "refused"; error: ApiError; rotation: KeyRotation | null }
  | { outcome: "not_attributed"; rotation: KeyRotation | null; message: string }
  | {
      outcome: "record";
      rotation: KeyRotation | null;
      programId: number;
      sale: SaleRow;
      customer: CustomerWrite;
      commission: CommissionPlan | null;
      /** Set when the sale is stored but answers 400 (a customer without a partner). */
      refuseAfterWrite: ApiError | null;
      message: string;
      test: boolean;
    };

function invalid(message: string): ApiError {
  return platformError(400, message, { code: "invalid_request" });
}

function noAttribution(message: string): ApiError {
  return platformError(400, message, { code: "no_attribution" });
}

export function testTransactionId(now: Date): string {
  return `test_txn_${now.getTime()}`;
}

/**
 * The sale rules, in the order the spec's errors are checked: credential, body rules that need the
 * clock, currency, test mode, required fields, duplicate, attribution, window, commission terms.
 */
export function decideSale(input: SaleInput, facts: SaleFacts): SaleDecision {
  const { body, now } = input;
  const verdict = evaluateApiKey(input.header, facts.key, now, saleKeyMessages, input.docsUrl);
  if (!verdict.ok) return { outcome: "refused", error: verdict.error, rotation: null };
  const rotation = verdict.rotation;
  const refuse = (error: ApiError): SaleDecision => ({ outcome: "refused", error, rotation });
  const program = facts.program;
  if (!program) throw new Error("the key's program was not read");

  if (body.occurred_at) {
    const occurredAt = new Date(body.occurred_at).getTime();
    if (occurredAt < now.getTime() - 30 * dayMs || occurredAt > now.getTime() + 5 * 60_000) {
      return refuse(invalid(occurredAtMessage));
    }
  }
  const currency = (body.currency ?? "USD").toUpperCase();
  if (!isSupportedCurrency(currency)) {
    return refuse(
      platformError(422, `currency ${body.currency} is not supported`, { code: "unsupported_currency" }),
    );
  }

  const test = verdict.isTest || body.livemode === false || body.additional_data?.test_mode === true;
  if (!test) {
    if (body.transaction_id === undefined) return refuse(invalid(saleRequiredMessages.transactionId));
    if (body.amount_cents === undefined) return refuse(invalid(saleRequiredMessages.amount));
  }
  if (facts.existingSaleId !== null) {
    return refuse(
      platformError(409, "Duplicate transaction_id. This sale has already been recorded.", {
        code: "duplicate_transaction",
        details: { sale_id: facts.existingSaleId },
      }),
    );
  }

  const saleRow = (partnerId: number | null, isTest: boolean): SaleRow => ({
    processorEventId: body.transaction_id ?? testTransactionId(now),
    programId: program.id,
    partnerId,
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
    isTest,
  });

  if (test) {
    // A test sale is stored flagged and touches no customer, commission or balance.
    return {
      outcome: "record",
      rotation,
      programId: program.id,
      sale: saleRow(null, true),
      customer: { kind: "none" },
      commission: null,
      refuseAfterWrite: null,
      message: "Test sale recorded",
      test: true,
    };
  }

  const resolved = resolveCustomer(facts, program.id);
  if ("error" in resolved) return refuse(resolved.error);
  const { customer, clickedAt, partnerId, partnerIsMember } = resolved;

  if (partnerId === null) {
    // The spec's contract: the sale is stored, so a resend gives 409.
    return {
      outcome: "record",
      rotation,
      programId: program.id,
      sale: saleRow(null, false),
      customer: customer.kind === "update" ? { ...customer } : customer,
      commission: null,
      refuseAfterWrite: noAttribution("partnerId required to create commission"),
      message: "",
      test: false,
    };
  }
  if (!partnerIsMember)
    return refuse(noAttribution("No partner-program relationship found for this customer"));

  const existing = customer.kind === "update" ? resolved.existing : null;
  if (!existing?.firstConvertedAt && clickedAt) {
    // Until the first conversion, the click must be within the window of the signup (or of this payment).
    const reference = existing?.signedUpAt ?? now;
    if (reference.getTime() - clickedAt.getTime() > program.attributionWindowDays * dayMs) {
      return {
        outcome: "not_attributed",
        rotation,
        message:
          "Sale not attributed: the click is older than the program's attribution window. Nothing was recorded.",
      };
    }
  }

  const policy = policyFor(program, facts.productRule);
  const eligibility = commissionEligibility(policy, existing?.firstCommissionAt ?? null, now);
  const amountCents = body.amount_cents as number;
  const commission = eligibility.eligible
    ? planCommission(policy, { amountCents, currency }, program.holdDays, now)
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
    sale: saleRow(partnerId, false),
    customer,
    commission,
    refuseAfterWrite: null,
    message,
    test: false,
  };
}

type Resolution =
  | { error: ApiError }
  | {
      customer: CustomerWrite;
      existing: SaleCustomer | null;
      clickedAt: Date | null;
      partnerId: number | null;
      partnerIsMember: boolean;
    };

/** Attribution through `customer_key` first, then `click_id` (spec: sale body). */
function resolveCustomer(facts: SaleFacts, programId: number): Resolution {
  const fromExisting = (customer: SaleCustomer): Resolution => ({
    customer: { kind: "update", id: customer.id, expectedFirstCommissionAt: customer.firstCommissionAt },
    existing: customer,
    clickedAt: customer.clickedAt,
    partnerId: customer.partnerId,
    partnerIsMember: customer.partnerIsMember,
  });
  if (facts.customerByKey) return fromExisting(facts.customerByKey);
  const click = facts.click;
  if (!click || click.isTest) {
    return { error: noAttribution("Customer not found. Provide customer_key or click_id.") };
  }
  if (click.programId !== programId) {
    return { error: noAttribution("No affiliate attribution found for this customer in this program") };
  }
  if (click.customer) return fromExisting(click.customer);
  return {
    customer: {
      kind: "create",
      programId,
      partnerId: click.partnerId,
      clickId: click.clickId,
      clickedAt: click.createdAt,
    },
    existing: null,
    clickedAt: click.createdAt,
    partnerId: click.partnerId,
    partnerIsMember: click.partnerIsMember,
  };
}
