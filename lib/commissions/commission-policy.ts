import type { CommissionType } from "../../schema/programs.ts";
import { type Currency, currencyExponents, divideRoundHalfUp, toTenThousandths } from "../money.ts";

/** The commission terms that apply to one sale: the program's, or its per-product rule's. */
export interface CommissionPolicy {
  type: CommissionType;
  /** Decimal string: a percentage for percent types, an amount in the currency's major unit for fixed. */
  rate: string;
  /** Recurring types only: months from the customer's first commission; 0 = lifetime. */
  durationMonths: number;
}

export interface ProgramTerms {
  commissionType: CommissionType;
  commissionRate: string;
  durationMonths: number;
}

export interface ProductRule {
  commissionType: CommissionType;
  commissionRate: string;
  durationMonths: number | null;
}

/** A per-product rule replaces the program's type and rate; its duration falls back to the program's. */
export function policyFor(program: ProgramTerms, rule: ProductRule | null): CommissionPolicy {
  if (rule) {
    return {
      type: rule.commissionType,
      rate: rule.commissionRate,
      durationMonths: rule.durationMonths ?? program.durationMonths,
    };
  }
  return {
    type: program.commissionType,
    rate: program.commissionRate,
    durationMonths: program.durationMonths,
  };
}

export function isRecurring(type: CommissionType): boolean {
  return type === "recurring_percent" || type === "recurring_fixed";
}

/**
 * The commission of a sale in minor units of the sale's currency (no conversion). Percent types: the
 * amount times the rate, rounded half up to the minor unit. Fixed types: the rate in major units.
 */
export function commissionAmount(policy: CommissionPolicy, amountCents: number, currency: Currency): number {
  const rate = toTenThousandths(policy.rate);
  if (policy.type === "percent" || policy.type === "recurring_percent") {
    return Number(divideRoundHalfUp(BigInt(amountCents) * rate, 100n * 10000n));
  }
  const minorPerMajor = 10n ** BigInt(currencyExponents[currency]);
  return Number(divideRoundHalfUp(rate * minorPerMajor, 10000n));
}

/** Adds calendar months, clamping to the last day of a shorter month (Jan 31 + 1 month = Feb 28/29). */
export function addMonths(date: Date, months: number): Date {
  const result = new Date(date.getTime());
  const day = result.getUTCDate();
  result.setUTCDate(1);
  result.setUTCMonth(result.getUTCMonth() + months);
  const lastDay = new Date(Date.UTC(result.getUTCFullYear(), result.getUTCMonth() + 1, 0)).getUTCDate();
  result.setUTCDate(Math.min(day, lastDay));
  return result;
}

export type CommissionEligibility =
  | { eligible: true }
  | { eligible: false; reason: "one_time_already_paid" | "recurring_period_ended" };

/**
 * One-time types (`percent`, `fixed`) pay on the customer's first commissioned sale only. Recurring types
 * pay on every sale while `now` is within `duration_months` of the customer's first commission (0 = always).
 */
export function commissionEligibility(
  policy: CommissionPolicy,
  firstCommissionAt: Date | null,
  now: Date,
): CommissionEligibility {
  if (firstCommissionAt === null) return { eligible: true };
  if (!isRecurring(policy.type)) return { eligible: false, reason: "one_time_already_paid" };
  if (policy.durationMonths === 0) return { eligible: true };
  return now.getTime() < addMonths(firstCommissionAt, policy.durationMonths).getTime()
    ? { eligible: true }
    : { eligible: false, reason: "recurring_period_ended" };
}

export interface CommissionPlan {
  amountCents: number;
  currency: Currency;
  status: "pending" | "approved";
  /** End of the hold period, for `pending` commissions. */
  holdUntil: Date | null;
}

/** Hold period: with `hold_days` > 0 the commission waits as `pending`; otherwise it is approved at once. */
export function planCommission(
  policy: CommissionPolicy,
  sale: { amountCents: number; currency: Currency },
  holdDays: number,
  now: Date,
): CommissionPlan {
  const amountCents = commissionAmount(policy, sale.amountCents, sale.currency);
  if (holdDays > 0) {
    return {
      amountCents,
      currency: sale.currency,
      status: "pending",
      holdUntil: new Date(now.getTime() + holdDays * 86_400_000),
    };
  }
  return { amountCents, currency: sale.currency, status: "approved", holdUntil: null };
}
