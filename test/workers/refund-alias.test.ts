import { sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { createProgram, db, postJson } from "./harness.ts";
import { click, commissionsOf, sale, txn } from "./sale-harness.ts";

describe("refund by a payment alias", () => {
  it("finds an invoice sale by its PaymentIntent id, within the key's program only", async () => {
    const p = await createProgram({ commissionType: "percent", commissionRate: "10" });
    const invoiceId = `in_${txn()}`;
    const recorded = await sale(p, {
      transaction_id: invoiceId,
      amount_cents: 1000,
      click_id: await click(p),
    });
    const paymentIntent = `pi_${txn()}`;
    await db.execute(sql`insert into payment_aliases (program_id, alias, payment_id, sale_id)
                         values (${p.programId}, ${paymentIntent}, ${invoiceId}, ${recorded.body.sale_id as number})`);
    const other = await createProgram();
    const foreign = await postJson(
      "/api/v1/track/refund",
      { transaction_id: paymentIntent },
      { Authorization: `Bearer ${other.apiKey}` },
    );
    expect(foreign.status).toBe(404);
    const response = await postJson(
      "/api/v1/track/refund",
      { transaction_id: paymentIntent, refund_amount_cents: 500 },
      { Authorization: `Bearer ${p.apiKey}` },
    );
    expect(response.body).toEqual({
      success: true,
      status: "refunded",
      deductionAmount: 50,
      commission_id: recorded.body.commission_id,
    });
    expect((await commissionsOf(p.programId))[0]?.deductedCents).toBe(50);
  });
});
