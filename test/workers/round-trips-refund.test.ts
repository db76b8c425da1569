import { describe, expect, it } from "vitest";
import { createProgram } from "./harness.ts";
import { refund, trackedSale } from "./refund-harness.ts";
import { countDatabaseRoundTrips } from "./round-trip-counter.ts";
import { click, txn } from "./sale-harness.ts";

const roundTripsOf = countDatabaseRoundTrips();

describe("refund: database round trips per request (budget 2)", () => {
  it("1 for an applied refund the database decides and writes at once (its notifications written with it): partial, further partial, full, pending, no commission", async () => {
    const p = await createProgram({ commissionType: "percent", commissionRate: "20" });
    const s = await trackedSale(p, 10_000);
    const body = { transaction_id: s.transactionId, refund_amount_cents: 1000, refund_id: "a" };
    expect(await roundTripsOf(() => refund(p, body))).toBe(1);
    expect(await roundTripsOf(() => refund(p, { ...body, refund_id: "b" }))).toBe(1);
    expect(await roundTripsOf(() => refund(p, { transaction_id: s.transactionId }))).toBe(1);

    const pending = await createProgram({ holdDays: 30 });
    const held = await trackedSale(pending, 10_000);
    expect(await roundTripsOf(() => refund(pending, { transaction_id: held.transactionId }))).toBe(1);

    const clickId = await click(p);
    await trackedSale(p, 1000, { clickId });
    const withoutCommission = await trackedSale(p, 1000, { clickId });
    expect(withoutCommission.commissionId).toBeNull();
    expect(await roundTripsOf(() => refund(p, { transaction_id: withoutCommission.transactionId }))).toBe(1);
  });

  it("1 for a skipped refund (repeated, already reversed) and for a 404; 1 for the test key", async () => {
    const p = await createProgram();
    const s = await trackedSale(p, 10_000);
    const body = { transaction_id: s.transactionId, refund_amount_cents: 1000, refund_id: "dup" };
    await refund(p, body);
    expect(await roundTripsOf(() => refund(p, body))).toBe(1);
    await refund(p, { transaction_id: s.transactionId });
    expect(await roundTripsOf(() => refund(p, { transaction_id: s.transactionId }))).toBe(1);
    expect(await roundTripsOf(() => refund(p, { transaction_id: txn() }))).toBe(1);
    expect(await roundTripsOf(() => refund(p, { transaction_id: s.transactionId }, p.testApiKey))).toBe(1);
    expect(await roundTripsOf(() => refund(p, "{not json", p.testApiKey))).toBe(1);
  });

  it("1 for an unknown key or an invalid body (the key is read first), 0 for a missing header", async () => {
    const p = await createProgram();
    expect(await roundTripsOf(() => refund(p, { transaction_id: txn() }, "sk_live_unknown"))).toBe(1);
    expect(await roundTripsOf(() => refund(p, { transaction_id: 5 }))).toBe(1);
    expect(await roundTripsOf(() => refund(p, { transaction_id: txn() }, ""))).toBe(0);
  });
});
