import { describe, expect, it } from "vitest";
import { createProgram, type ProgramFixture } from "./harness.ts";
import { balanceOf, click, commissionsOf, sale, salesOf, txn } from "./sale-harness.ts";

/** The same sale sent 20 times at once: exactly one 200, and nineteen 409s naming its sale_id. */
async function expectOneRecordedOf20AtOnce(p: ProgramFixture, body: Record<string, unknown>): Promise<void> {
  const responses = await Promise.all(Array.from({ length: 20 }, () => sale(p, body)));
  const ok = responses.filter((r) => r.status === 200);
  const conflicts = responses.filter((r) => r.status === 409);
  expect(ok).toHaveLength(1);
  expect(conflicts).toHaveLength(19);
  const saleId = ok[0]?.body.sale_id;
  for (const conflict of conflicts) {
    expect(conflict.body.error).toMatchObject({
      code: "duplicate_transaction",
      details: { sale_id: saleId },
    });
  }
}

// Needs a real multi-connection PostgreSQL (PGlite is one session): runs when DATABASE_URL is set.
describe("concurrent identical sales (PostgreSQL)", () => {
  it("20 at once: exactly one 200 and nineteen 409s with the same sale_id; one sale, one commission", async () => {
    const p = await createProgram({ commissionType: "percent", commissionRate: "10" });
    const clickId = await click(p);
    await expectOneRecordedOf20AtOnce(p, { transaction_id: txn(), amount_cents: 10_000, click_id: clickId });
    expect(await salesOf(p.programId)).toHaveLength(1);
    expect(await commissionsOf(p.programId)).toHaveLength(1);
    expect(await balanceOf(p.programId, p.partnerIds[0])).toBe(1000);
  });

  it("10 different one-time sales of one new customer at once: one commission in total", async () => {
    const p = await createProgram({ commissionType: "percent", commissionRate: "10" });
    const clickId = await click(p);
    const responses = await Promise.all(
      Array.from({ length: 10 }, () =>
        sale(p, { transaction_id: txn(), amount_cents: 1000, click_id: clickId }),
      ),
    );
    expect(responses.map((r) => r.status)).toEqual(Array(10).fill(200));
    expect(await salesOf(p.programId)).toHaveLength(10);
    expect(await commissionsOf(p.programId)).toHaveLength(1);
    expect(await balanceOf(p.programId, p.partnerIds[0])).toBe(100);
  });

  it("20 identical sales of a returning customer at once (its row no longer locked): one 200, one commission", async () => {
    const p = await createProgram({ commissionType: "recurring_percent", commissionRate: "10" });
    const clickId = await click(p);
    const first = await sale(p, { transaction_id: txn(), amount_cents: 1000, click_id: clickId });
    expect(first.status).toBe(200);
    await expectOneRecordedOf20AtOnce(p, { transaction_id: txn(), amount_cents: 10_000, click_id: clickId });
    expect(await salesOf(p.programId)).toHaveLength(2);
    expect(await commissionsOf(p.programId)).toHaveLength(2);
    expect(await balanceOf(p.programId, p.partnerIds[0])).toBe(100 + 1000);
  });
});
