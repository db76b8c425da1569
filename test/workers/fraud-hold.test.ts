import { eq, inArray } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { approveDueCommissions } from "../../lib/commissions/approve-due-commissions.ts";
import { commissions, programs, saleEvents } from "../../schema/index.ts";
import { ageClickAndCustomer, clickFrom, newDevice, scanUntilScanned } from "./fraud-harness.ts";
import { createProgram, db, type ProgramFixture } from "./harness.ts";
import { commissionRow, ledgerOfPartner } from "./refund-harness.ts";
import { balanceOf, sale, txn } from "./sale-harness.ts";

/**
 * A commission due a minute from now (out of reach of any real cron run meanwhile, as in approval.test.ts),
 * from a sale whose click is fresh (flagged `fast_conversion` once scanned) or an hour old (no flag).
 */
async function dueCommission(p: ProgramFixture, fast: boolean, amountCents = 10_000) {
  const clickId = await clickFrom(p, newDevice());
  if (!fast) await ageClickAndCustomer(clickId);
  const response = await sale(p, { transaction_id: txn(), amount_cents: amountCents, click_id: clickId });
  expect(response.status).toBe(200);
  const saleId = response.body.sale_id as number;
  const commissionId = response.body.commission_id as number;
  return { saleId, commissionId };
}

async function holdUntil(at: Date, commissionIds: number[]) {
  await db.update(commissions).set({ holdUntil: at }).where(inArray(commissions.id, commissionIds));
}

async function approveAt(now: Date): Promise<void> {
  for (;;) {
    const result = await approveDueCommissions(db, now);
    if (result.approved < 200) return;
  }
}

describe("holding flagged commissions for review (hold_flagged_commissions)", () => {
  it("holds a flagged commission for review, approves an unflagged one, and never an unscanned one", async () => {
    const p = await createProgram({ holdDays: 30 });
    await db.update(programs).set({ holdFlaggedCommissions: true }).where(eq(programs.id, p.programId));
    const partner = p.partnerIds[0];
    const flagged = await dueCommission(p, true, 10_000);
    const clean = await dueCommission(p, false, 20_000);
    const unscanned = await dueCommission(p, false, 40_000);
    await scanUntilScanned([], [flagged.saleId, clean.saleId, unscanned.saleId]);
    // As if the scan had not reached it yet.
    await db.update(saleEvents).set({ fraudScannedAt: null }).where(eq(saleEvents.id, unscanned.saleId));
    const at = new Date(Date.now() + 60_000);
    await holdUntil(at, [flagged.commissionId, clean.commissionId, unscanned.commissionId]);

    await approveAt(at);
    expect(await commissionRow(flagged.commissionId)).toMatchObject({
      status: "pending",
      needsManualReview: true,
      creditedAt: null,
      fraudFlags: ["fast_conversion"],
    });
    expect(await commissionRow(clean.commissionId)).toMatchObject({
      status: "approved",
      needsManualReview: false,
    });
    expect(await commissionRow(unscanned.commissionId)).toMatchObject({
      status: "pending",
      needsManualReview: false,
      creditedAt: null,
    });
    expect(await balanceOf(p.programId, partner)).toBe(4000);

    // Once scanned (nothing found), the next run approves it; nothing is approved or credited twice.
    await scanUntilScanned([], [unscanned.saleId]);
    const cleanApprovedAt = (await commissionRow(clean.commissionId)).approvedAt;
    await approveAt(at);
    await approveAt(at);
    expect(await commissionRow(unscanned.commissionId)).toMatchObject({ status: "approved" });
    expect((await commissionRow(clean.commissionId)).approvedAt).toEqual(cleanApprovedAt);
    expect(await commissionRow(flagged.commissionId)).toMatchObject({
      status: "pending",
      needsManualReview: true,
    });
    expect(await balanceOf(p.programId, partner)).toBe(4000 + 8000);
    expect((await ledgerOfPartner(p.programId, partner)).map((row) => row.commissionId).sort()).toEqual(
      [clean.commissionId, unscanned.commissionId].sort(),
    );
  });

  it("without the setting (the default), flags never block: a flagged commission is approved", async () => {
    const p = await createProgram({ holdDays: 30 });
    const flagged = await dueCommission(p, true);
    await scanUntilScanned([], [flagged.saleId]);
    const at = new Date(Date.now() + 60_000);
    await holdUntil(at, [flagged.commissionId]);
    await approveAt(at);
    expect(await commissionRow(flagged.commissionId)).toMatchObject({
      status: "approved",
      needsManualReview: false,
      fraudFlags: ["fast_conversion"],
    });
  });
});
