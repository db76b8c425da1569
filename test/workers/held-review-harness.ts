import { eq, inArray } from "drizzle-orm";
import { expect } from "vitest";
import { approveDueCommissions } from "../../lib/commissions/approve-due-commissions.ts";
import { commissions, programs } from "../../schema/index.ts";
import { call } from "./dashboard-sign-in.ts";
import { clickFrom, newDevice, scanUntilScanned } from "./fraud-harness.ts";
import { createProgram, db, type ProgramFixture } from "./harness.ts";
import { addMember, type Person, signedInPerson } from "./program-admin-harness.ts";
import { commissionRow } from "./refund-harness.ts";
import { sale, txn } from "./sale-harness.ts";

export const heldPath = (programId: number) => `/api/v1/programs/${programId}/commissions/held`;
export const reviewPath = (programId: number, commissionId: number | string) =>
  `/api/v1/programs/${programId}/commissions/${commissionId}/review`;

/** A program holding flagged commissions, and a signed-in owner of its workspace. */
export async function reviewedProgram(): Promise<{ p: ProgramFixture; owner: Person; advertiserId: number }> {
  const p = await createProgram({ holdDays: 30 });
  const [program] = await db
    .update(programs)
    .set({ holdFlaggedCommissions: true })
    .where(eq(programs.id, p.programId))
    .returning();
  const owner = await signedInPerson();
  await addMember(program!.advertiserId, owner.userId, "owner");
  return { p, owner, advertiserId: program!.advertiserId };
}

/**
 * Commissions held for review as the approval job holds them: sales right after their click (flagged
 * `fast_conversion` by the scan), due a minute from now (out of reach of a real cron run), then the job.
 */
export async function heldCommissions(p: ProgramFixture, amounts: number[]) {
  const made: { saleId: number; commissionId: number }[] = [];
  for (const amountCents of amounts) {
    const clickId = await clickFrom(p, newDevice());
    const response = await sale(p, { transaction_id: txn(), amount_cents: amountCents, click_id: clickId });
    expect(response.status).toBe(200);
    made.push({
      saleId: response.body.sale_id as number,
      commissionId: response.body.commission_id as number,
    });
  }
  await scanUntilScanned(
    [],
    made.map((m) => m.saleId),
  );
  const at = new Date(Date.now() + 60_000);
  const ids = made.map((m) => m.commissionId);
  await db.update(commissions).set({ holdUntil: at }).where(inArray(commissions.id, ids));
  for (;;) if ((await approveDueCommissions(db, at)).approved < 200) break;
  for (const id of ids)
    expect(await commissionRow(id)).toMatchObject({ status: "pending", needsManualReview: true });
  return made;
}

/** A commission still in its hold period: pending, not held for review. */
export async function pendingCommission(p: ProgramFixture): Promise<number> {
  const clickId = await clickFrom(p, newDevice());
  const response = await sale(p, { transaction_id: txn(), amount_cents: 5_000, click_id: clickId });
  expect(response.status).toBe(200);
  return response.body.commission_id as number;
}

export function decide(token: string, programId: number, commissionId: number | string, decision: unknown) {
  return call("POST", reviewPath(programId, commissionId), { token, body: { decision } });
}
