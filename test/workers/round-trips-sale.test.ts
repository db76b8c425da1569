import { describe, expect, it } from "vitest";
import { createProgram } from "./harness.ts";
import { countDatabaseRoundTrips } from "./round-trip-counter.ts";
import { click, sale, txn } from "./sale-harness.ts";

const roundTripsOf = countDatabaseRoundTrips();

describe("sale: database round trips per request (budget 2)", () => {
  it("1 read + 1 write for an attributed sale with an approved commission, new or known customer", async () => {
    const p = await createProgram({ commissionType: "recurring_percent" });
    const clickId = await click(p);
    expect(
      await roundTripsOf(() => sale(p, { transaction_id: txn(), amount_cents: 1000, click_id: clickId })),
    ).toBe(2);
    expect(
      await roundTripsOf(() => sale(p, { transaction_id: txn(), amount_cents: 1000, click_id: clickId })),
    ).toBe(2);
  });

  it("2 for a test sale; 1 for a refusal; 0 for an invalid body", async () => {
    const p = await createProgram();
    expect(await roundTripsOf(() => sale(p, { transaction_id: txn(), amount_cents: 10 }, p.testApiKey))).toBe(
      2,
    );
    expect(
      await roundTripsOf(() => sale(p, { transaction_id: txn(), amount_cents: 10, click_id: "clk_none" })),
    ).toBe(1);
    expect(await roundTripsOf(() => sale(p, { transaction_id: 1 }))).toBe(0);
  });
});
