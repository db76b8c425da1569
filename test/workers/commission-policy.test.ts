import { describe, expect, it } from "vitest";
import {
  addMonths,
  commissionAmount,
  commissionEligibility,
  planCommission,
  policyFor,
} from "../../lib/commissions/commission-policy.ts";
import { toTenThousandths } from "../../lib/money.ts";

describe("commission amount per type", () => {
  it.each([
    { type: "percent", rate: "20", amount: 1000, currency: "USD", expected: 200 },
    { type: "percent", rate: "12.5", amount: 999, currency: "USD", expected: 125 }, // 124.875 rounds half up
    { type: "percent", rate: "33.3333", amount: 100, currency: "EUR", expected: 33 },
    { type: "percent", rate: "0.01", amount: 49, currency: "USD", expected: 0 }, // 0.0049
    { type: "percent", rate: "100", amount: 12345, currency: "VND", expected: 12345 },
    { type: "recurring_percent", rate: "30", amount: 2999, currency: "USD", expected: 900 }, // 899.7
    { type: "fixed", rate: "5", amount: 1, currency: "USD", expected: 500 },
    { type: "fixed", rate: "2.555", amount: 1, currency: "EUR", expected: 256 },
    { type: "fixed", rate: "50000", amount: 10, currency: "VND", expected: 50000 },
    { type: "recurring_fixed", rate: "9.99", amount: 100, currency: "USD", expected: 999 },
  ] as const)(
    "$type $rate on $amount $currency = $expected",
    ({ type, rate, amount, currency, expected }) => {
      expect(commissionAmount({ type, rate, durationMonths: 0 }, amount, currency)).toBe(expected);
    },
  );

  it("reads decimal rates exactly", () => {
    expect(toTenThousandths("20.0000")).toBe(200000n);
    expect(toTenThousandths("0.5")).toBe(5000n);
    expect(() => toTenThousandths("-1")).toThrow();
  });
});

describe("commission eligibility", () => {
  const now = new Date("2026-06-15T12:00:00Z");
  it("pays one-time types on the first commission only", () => {
    const policy = { type: "percent" as const, rate: "10", durationMonths: 0 };
    expect(commissionEligibility(policy, null, now)).toEqual({ eligible: true });
    expect(commissionEligibility(policy, new Date("2026-06-01T00:00:00Z"), now)).toEqual({
      eligible: false,
      reason: "one_time_already_paid",
    });
  });

  it("pays recurring types within duration_months of the first commission, forever when 0", () => {
    const limited = { type: "recurring_percent" as const, rate: "10", durationMonths: 3 };
    expect(commissionEligibility(limited, new Date("2026-03-15T12:00:01Z"), now)).toEqual({ eligible: true });
    expect(commissionEligibility(limited, new Date("2026-03-15T12:00:00Z"), now)).toEqual({
      eligible: false,
      reason: "recurring_period_ended",
    });
    const lifetime = { type: "recurring_fixed" as const, rate: "1", durationMonths: 0 };
    expect(commissionEligibility(lifetime, new Date("2016-01-01T00:00:00Z"), now)).toEqual({
      eligible: true,
    });
  });

  it("adds calendar months, clamping to the month's end", () => {
    expect(addMonths(new Date("2026-01-31T10:00:00Z"), 1).toISOString()).toBe("2026-02-28T10:00:00.000Z");
    expect(addMonths(new Date("2028-01-31T10:00:00Z"), 1).toISOString()).toBe("2028-02-29T10:00:00.000Z");
    expect(addMonths(new Date("2026-11-30T00:00:00Z"), 3).toISOString()).toBe("2027-02-28T00:00:00.000Z");
  });
});

describe("product rules and hold period", () => {
  const program = { commissionType: "percent" as const, commissionRate: "20", durationMonths: 6 };
  it("uses the product rule's type and rate, and the program's duration when the rule has none", () => {
    expect(policyFor(program, null)).toEqual({ type: "percent", rate: "20", durationMonths: 6 });
    expect(
      policyFor(program, { commissionType: "recurring_fixed", commissionRate: "3", durationMonths: null }),
    ).toEqual({
      type: "recurring_fixed",
      rate: "3",
      durationMonths: 6,
    });
  });

  it("holds a commission as pending for hold_days, else approves it at once", () => {
    const now = new Date("2026-06-15T12:00:00Z");
    const policy = policyFor(program, null);
    expect(planCommission(policy, { amountCents: 1000, currency: "USD" }, 30, now)).toEqual({
      amountCents: 200,
      currency: "USD",
      status: "pending",
      holdUntil: new Date("2026-07-15T12:00:00Z"),
    });
    expect(planCommission(policy, { amountCents: 1000, currency: "EUR" }, 0, now)).toEqual({
      amountCents: 200,
      currency: "EUR",
      status: "approved",
      holdUntil: null,
    });
  });
});
