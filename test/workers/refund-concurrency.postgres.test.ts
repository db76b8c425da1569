import { describe, expect, it } from "vitest";
import { createProgram } from "./harness.ts";
import {
  commissionRow,
  expectBalanceMatchesLedger,
  expectedDeduction,
  ledgerOfPartner,
  refund,
  refundsOfSale,
  saleRow,
  trackedSale,
} from "./refund-harness.ts";

// Needs a real multi-connection PostgreSQL (PGlite is one session): runs when DATABASE_URL is set.
describe("concurrent refunds of one sale (PostgreSQL)", () => {
  it("20 at once, distinct and repeated refund_ids: each applied once, deduction = rule, balance = ledger", async () => {
    const p = await createProgram({ commissionType: "percent", commissionRate: "15" });
    const saleCents = 100_003; // commission 15000 (15000.45), an awkward ratio for rounding
    const s = await trackedSale(p, saleCents);
    const partner = p.partnerIds[0];
    const commission = await commissionRow(s.commissionId!);
    expect(commission.amountCents).toBe(15_000);

    // 12 distinct refund_ids (amounts 1001..1012), 8 of them sent twice.
    const distinct = Array.from({ length: 12 }, (_, i) => ({ id: `re_${i}`, amount: 1001 + i }));
    const calls = [...distinct, ...distinct.slice(0, 8)].sort(() => Math.random() - 0.5);
    expect(calls).toHaveLength(20);
    const responses = await Promise.all(
      calls.map((c) =>
        refund(p, { transaction_id: s.transactionId, refund_amount_cents: c.amount, refund_id: c.id }),
      ),
    );

    for (const response of responses) expect(response.status, JSON.stringify(response.body)).toBe(200);
    const applied = responses.filter((r) => r.body.status === "refunded");
    const skipped = responses.filter((r) => r.body.status === "skipped");
    expect(applied).toHaveLength(12);
    expect(skipped).toHaveLength(8);
    for (const r of skipped) {
      expect(r.body).toEqual({
        success: true,
        status: "skipped",
        reason: "refund_id already applied",
        commission_id: s.commissionId,
      });
    }

    const refunded = distinct.reduce((sum, c) => sum + c.amount, 0);
    expect((await saleRow(s.saleId)).refundedCents).toBe(refunded);
    const rows = await refundsOfSale(s.saleId);
    expect(rows.map((r) => r.refundId).sort()).toEqual(distinct.map((c) => c.id).sort());
    // Each row's running total is distinct: the refunds were applied one after another.
    expect(new Set(rows.map((r) => r.refundedTotalCents)).size).toBe(12);

    const rule = expectedDeduction(commission.amountCents, refunded, saleCents);
    const after = await commissionRow(s.commissionId!);
    expect(after).toMatchObject({ status: "refunded", deductedCents: rule });
    const deductions = applied.reduce((sum, r) => sum + (r.body.deductionAmount as number), 0);
    expect(deductions).toBe(rule);
    expect(rows.reduce((sum, r) => sum + r.deductionCents, 0)).toBe(rule);

    const balance = await expectBalanceMatchesLedger(p.programId, partner);
    expect(balance).toBe(commission.amountCents - rule);
    const ledger = await ledgerOfPartner(p.programId, partner);
    expect(ledger.filter((l) => l.cause === "refund_deduction").length).toBe(
      rows.filter((r) => r.deductionCents > 0).length,
    );
  });

  it("20 identical full refunds at once: one reversal, nineteen skipped", async () => {
    const p = await createProgram({ commissionType: "fixed", commissionRate: "25" });
    const s = await trackedSale(p, 9_999);
    const responses = await Promise.all(
      Array.from({ length: 20 }, () => refund(p, { transaction_id: s.transactionId })),
    );
    expect(responses.map((r) => r.status)).toEqual(Array(20).fill(200));
    const reversed = responses.filter((r) => r.body.status === "reversed");
    expect(reversed).toHaveLength(1);
    expect(reversed[0]!.body).toMatchObject({ deductionAmount: 2500 });
    expect(responses.filter((r) => r.body.status === "skipped")).toHaveLength(19);
    expect(await refundsOfSale(s.saleId)).toHaveLength(1);
    expect(await commissionRow(s.commissionId!)).toMatchObject({ status: "reversed", deductedCents: 2500 });
    expect(await expectBalanceMatchesLedger(p.programId, p.partnerIds[0])).toBe(0);
  });
});
