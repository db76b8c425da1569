import { eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { paymentAliases, programs } from "../../schema/index.ts";
import { createProgram, db } from "./harness.ts";
import { countDatabaseRoundTrips } from "./round-trip-counter.ts";
import { click, sale, salesOf, txn } from "./sale-harness.ts";

const roundTripsOf = countDatabaseRoundTrips();

describe("sale: database round trips per request (budget 2)", () => {
  it("1 for an attributed sale the database decides and writes at once, new or known customer", async () => {
    const p = await createProgram({ commissionType: "recurring_percent" });
    const clickId = await click(p);
    expect(
      await roundTripsOf(() => sale(p, { transaction_id: txn(), amount_cents: 1000, click_id: clickId })),
    ).toBe(1);
    expect(
      await roundTripsOf(() => sale(p, { transaction_id: txn(), amount_cents: 1000, click_id: clickId })),
    ).toBe(1);
  });

  it("1 read + 1 write for a sale the database leaves to the rules (a recurring period that may have ended)", async () => {
    const p = await createProgram({ commissionType: "recurring_percent" });
    await db.update(programs).set({ durationMonths: 12 }).where(eq(programs.id, p.programId));
    const clickId = await click(p);
    expect(
      await roundTripsOf(() => sale(p, { transaction_id: txn(), amount_cents: 1000, click_id: clickId })),
    ).toBe(1);
    const known = await roundTripsOf(async () => {
      const second = await sale(p, { transaction_id: txn(), amount_cents: 1000, click_id: clickId });
      expect(second.body).toMatchObject({ message: "Sale recorded and commission created" });
    });
    expect(known).toBe(2);
  });

  it("2 for a test sale; 1 for a refusal, or an invalid body (its key is checked alone)", async () => {
    const p = await createProgram();
    expect(await roundTripsOf(() => sale(p, { transaction_id: txn(), amount_cents: 10 }, p.testApiKey))).toBe(
      2,
    );
    expect(
      await roundTripsOf(() => sale(p, { transaction_id: txn(), amount_cents: 10, click_id: "clk_none" })),
    ).toBe(1);
    expect(await roundTripsOf(() => sale(p, { transaction_id: 1 }))).toBe(1);
  });
});

describe("sale: a transaction_id that is a payment alias of a recorded sale", () => {
  it("answers 409 with that sale's id, found in the same read (1 round trip), and records nothing", async () => {
    const p = await createProgram();
    const clickId = await click(p);
    const invoiceId = txn();
    const recorded = await sale(p, { transaction_id: invoiceId, amount_cents: 1000, click_id: clickId });
    const saleId = Number(recorded.body.sale_id);
    // What `invoice_payment.paid` records for an invoice sale of the provider's events.
    const paymentIntent = txn();
    await db
      .insert(paymentAliases)
      .values({ programId: p.programId, alias: paymentIntent, paymentId: invoiceId, saleId });

    let duplicate: Awaited<ReturnType<typeof sale>> | undefined;
    expect(
      await roundTripsOf(async () => {
        duplicate = await sale(p, { transaction_id: paymentIntent, amount_cents: 1000, click_id: clickId });
      }),
    ).toBe(1);
    expect(duplicate?.status).toBe(409);
    expect(duplicate?.body).toMatchObject({
      error: { code: "duplicate_transaction", details: { sale_id: saleId } },
    });
    expect(await salesOf(p.programId)).toHaveLength(1);
  });

  it("an alias kept before its sale exists (sale_id null) refuses nothing", async () => {
    const p = await createProgram();
    const clickId = await click(p);
    const paymentIntent = txn();
    await db
      .insert(paymentAliases)
      .values({ programId: p.programId, alias: paymentIntent, paymentId: txn() });
    const response = await sale(p, { transaction_id: paymentIntent, amount_cents: 1000, click_id: clickId });
    expect(response.status).toBe(200);
  });
});
