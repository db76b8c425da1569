import { describe, expect, it } from "vitest";
import { saleRefusalError } from "../../lib/sales/sale-outcome-http.ts";
import {
  decideSale,
  resolutionFromCustomer,
  type SaleCustomer,
  type SaleFacts,
} from "../../lib/tracking/sale/decide-sale.ts";
import type { SaleRequest } from "../../lib/tracking/sale/sale-request.ts";

const now = new Date("2026-06-30T12:00:00.000Z");
const day = 86_400_000;
const header = { kind: "token" as const, token: "sk_live_x" };

function facts(overrides: Partial<SaleFacts> = {}): SaleFacts {
  return {
    key: { programId: 7, isTest: false, rotationMarkedAt: null, rotateBy: null },
    program: {
      id: 7,
      attributionWindowDays: 30,
      commissionType: "percent",
      commissionRate: "20",
      durationMonths: 0,
      holdDays: 0,
    },
    productRule: null,
    recordedSales: [],
    customerByKey: null,
    click: {
      clickId: "clk_1",
      programId: 7,
      partnerId: 3,
      createdAt: new Date(now.getTime() - 30 * day),
      isTest: false,
      partnerIsMember: true,
      customer: null,
    },
    ...overrides,
  };
}

/** Customer 1 of program 7, partner 3's, from `clk_1`: not signed up or converted unless `overrides` say so. */
function saleCustomer(overrides: Partial<SaleCustomer>): SaleCustomer {
  return {
    id: 1,
    programId: 7,
    partnerId: 3,
    clickId: "clk_1",
    clickedAt: new Date(now.getTime() - 10 * day),
    signedUpAt: null,
    firstConvertedAt: null,
    firstCommissionAt: null,
    hasProviderCustomerId: false,
    hasEmail: false,
    partnerIsMember: true,
    ...overrides,
  };
}

function decide(body: Partial<SaleRequest>, f: SaleFacts = facts(), at = now) {
  return decideSale(
    {
      header,
      body: { transaction_id: "t1", amount_cents: 1000, click_id: "clk_1", ...body },
      now: at,
    },
    f,
  );
}

describe("decideSale: attribution window with an injected clock", () => {
  it("attributes a click exactly attribution_window_days old, and not one a millisecond older", () => {
    expect(decide({}).outcome).toBe("record");
    const older = facts();
    older.click!.createdAt = new Date(now.getTime() - 30 * day - 1);
    expect(decide({}, older).outcome).toBe("not_attributed");
  });

  it("measures from the signup when there is one, and skips the check after the first conversion", () => {
    const customer = saleCustomer({
      clickedAt: new Date(now.getTime() - 100 * day),
      signedUpAt: new Date(now.getTime() - 71 * day),
    });
    expect(decide({}, facts({ customerByKey: customer })).outcome).toBe("record");
    expect(
      decide({}, facts({ customerByKey: { ...customer, signedUpAt: new Date(now.getTime() - 69 * day) } }))
        .outcome,
    ).toBe("not_attributed");
    const converted = { ...customer, signedUpAt: null, firstConvertedAt: new Date(now.getTime() - 60 * day) };
    expect(decide({}, facts({ customerByKey: converted })).outcome).toBe("record");
  });

  it("uses the time the call is received, not occurred_at, for the window and the hold", () => {
    const f = facts();
    f.program!.holdDays = 10;
    const decision = decide({ occurred_at: new Date(now.getTime() - 29 * day).toISOString() }, f);
    expect(decision).toMatchObject({
      outcome: "record",
      commission: { status: "pending", holdUntil: new Date(now.getTime() + 10 * day) },
    });
  });

  it("accepts occurred_at up to 30 days old and 5 minutes ahead, inclusive", () => {
    expect(decide({ occurred_at: new Date(now.getTime() - 30 * day).toISOString() }).outcome).toBe("record");
    expect(decide({ occurred_at: new Date(now.getTime() + 300_000).toISOString() }).outcome).toBe("record");
    expect(decide({ occurred_at: new Date(now.getTime() + 300_001).toISOString() }).outcome).toBe("refused");
  });

  it("refuses a key whose rotation deadline is now, and flags one before it", () => {
    const rotateBy = new Date(now.getTime() + 1000);
    const marked = facts({
      key: { programId: 7, isTest: false, rotationMarkedAt: new Date(now.getTime() - day), rotateBy },
    });
    expect(decide({}, marked)).toMatchObject({ outcome: "record", rotation: { rotateBy } });
    const retired = decide({}, marked, rotateBy);
    expect(retired).toMatchObject({ outcome: "refused", refusal: { reason: "key", refusal: "retired" } });
    if (retired.outcome !== "refused") throw new Error("not refused");
    expect(saleRefusalError(retired.refusal, "https://d").status).toBe(401);
  });
});

describe("decideSale: currency", () => {
  it("defaults an omitted or empty currency to USD and reads it case-insensitively", () => {
    for (const currency of [undefined, "", "usd", "USD"]) {
      expect(decide(currency === undefined ? {} : { currency })).toMatchObject({
        outcome: "record",
        sale: { currency: "USD" },
      });
    }
    expect(decide({ currency: "eur" })).toMatchObject({ outcome: "record", sale: { currency: "EUR" } });
    const refused = decide({ currency: "JPY" });
    expect(refused).toMatchObject({ outcome: "refused", refusal: { reason: "unsupported_currency" } });
    if (refused.outcome !== "refused") throw new Error("not refused");
    expect(saleRefusalError(refused.refusal, "https://d")).toMatchObject({
      status: 422,
      message: "currency JPY is not supported",
    });
  });
});

describe("decideSale: a returning customer's row", () => {
  const converted = saleCustomer({
    clickedAt: new Date(now.getTime() - 10 * day),
    firstConvertedAt: new Date(now.getTime() - 5 * day),
    firstCommissionAt: new Date(now.getTime() - 5 * day),
  });
  const cases: { name: string; customer: SaleCustomer; unchanged: boolean }[] = [
    { name: "converted, first commission dated: left alone", customer: converted, unchanged: true },
    {
      name: "signed up, not converted yet: converted now",
      customer: { ...converted, firstConvertedAt: null, firstCommissionAt: null },
      unchanged: false,
    },
    {
      name: "converted without a commission yet: its first commission may be dated now",
      customer: { ...converted, firstCommissionAt: null },
      unchanged: false,
    },
  ];
  for (const { name, customer, unchanged } of cases) {
    it(name, () => {
      const decision = decide({}, facts({ customerByKey: customer }));
      if (decision.outcome !== "record") throw new Error(`decided ${decision.outcome}`);
      expect(decision.customer).toMatchObject({ kind: "update", id: 1, unchanged });
    });
  }

  // A payment's provider customer id and email are written only where the row has none (`coalesce`).
  const email = { hash: "h", masked: "a***@example.com" };
  const withIds = { ...converted, hasProviderCustomerId: true, hasEmail: true };
  const extrasCases: {
    name: string;
    customer: SaleCustomer;
    extras: Parameters<typeof resolutionFromCustomer>[1];
    unchanged: boolean;
  }[] = [
    {
      name: "a provider id the row lacks",
      customer: converted,
      extras: { providerCustomerId: "cus_1" },
      unchanged: false,
    },
    { name: "an email the row lacks", customer: converted, extras: { email }, unchanged: false },
    {
      name: "an email the row lacks, with a provider id it has",
      customer: { ...converted, hasProviderCustomerId: true },
      extras: { providerCustomerId: "cus_1", email },
      unchanged: false,
    },
    {
      name: "nulls",
      customer: converted,
      extras: { providerCustomerId: null, email: null },
      unchanged: true,
    },
    {
      name: "a provider id and an email the row already has (a renewal)",
      customer: withIds,
      extras: { providerCustomerId: "cus_1", email },
      unchanged: true,
    },
  ];
  for (const { name, customer, extras, unchanged } of extrasCases) {
    it(`a payment bringing ${name}: ${unchanged ? "left alone" : "written"}`, () => {
      expect(resolutionFromCustomer(customer, extras).customer).toMatchObject({ kind: "update", unchanged });
    });
  }
});
