import { and, asc, eq, sql } from "drizzle-orm";
import { expect } from "vitest";
import { issueApiKey } from "../../lib/auth/api-keys.ts";
import {
  balanceLedger,
  commissions,
  notifications,
  programApiKeys,
  refunds,
  saleEvents,
  withdrawals,
} from "../../schema/index.ts";
import { db, type ProgramFixture, postJson } from "./harness.ts";
import { balanceOf, click, sale, txn } from "./sale-harness.ts";

export const refundPath = "/api/v1/track/refund";

export function refund(p: ProgramFixture, body: unknown, key = p.apiKey) {
  return postJson(refundPath, body, { Authorization: `Bearer ${key}` });
}

export interface TrackedSale {
  transactionId: string;
  saleId: number;
  commissionId: number | null;
  amountCents: number;
}

/** An attributed sale of a new customer (a fresh click), so one-time commission types pay it too. */
export async function trackedSale(
  p: ProgramFixture,
  amountCents: number,
  options: { clickId?: string; partner?: 0 | 1 } = {},
): Promise<TrackedSale> {
  const clickId = options.clickId ?? (await click(p, p.links[options.partner ?? 0]));
  const transactionId = txn();
  const response = await sale(p, {
    transaction_id: transactionId,
    amount_cents: amountCents,
    click_id: clickId,
  });
  if (response.status !== 200) throw new Error(`sale failed: ${JSON.stringify(response.body)}`);
  return {
    transactionId,
    saleId: response.body.sale_id as number,
    commissionId: (response.body.commission_id as number | null) ?? null,
    amountCents,
  };
}

export async function commissionRow(id: number) {
  const [row] = await db.select().from(commissions).where(eq(commissions.id, id));
  if (!row) throw new Error(`no commission ${id}`);
  return row;
}

export async function saleRow(id: number) {
  const [row] = await db.select().from(saleEvents).where(eq(saleEvents.id, id));
  if (!row) throw new Error(`no sale ${id}`);
  return row;
}

export async function refundsOfSale(saleId: number) {
  return db.select().from(refunds).where(eq(refunds.saleId, saleId)).orderBy(asc(refunds.id));
}

export async function ledgerOfPartner(programId: number, partnerId: number) {
  return db
    .select()
    .from(balanceLedger)
    .where(and(eq(balanceLedger.programId, programId), eq(balanceLedger.partnerId, partnerId)))
    .orderBy(asc(balanceLedger.id));
}

/** The partner's balance must always equal the sum of its ledger rows. Returns the balance. */
export async function expectBalanceMatchesLedger(
  programId: number,
  partnerId: number,
  currency = "USD",
): Promise<number> {
  const balance = await balanceOf(programId, partnerId, currency);
  const ledger = (await ledgerOfPartner(programId, partnerId)).filter((row) => row.currency === currency);
  expect(balance).toBe(ledger.reduce((sum, row) => sum + row.amountCents, 0));
  return balance;
}

export async function withdrawalsOf(programId: number) {
  return db
    .select()
    .from(withdrawals)
    .where(eq(withdrawals.programId, programId))
    .orderBy(asc(withdrawals.id));
}

export async function notificationByDedupeKey(dedupeKey: string) {
  const [row] = await db.select().from(notifications).where(eq(notifications.dedupeKey, dedupeKey));
  return row;
}

/** Waits until the queue consumer has written the notification (sent after the response: an approval's). */
export async function expectQueuedNotification(dedupeKey: string) {
  await expect
    .poll(async () => (await notificationByDedupeKey(dedupeKey)) !== undefined, { timeout: 15_000 })
    .toBe(true);
  return (await notificationByDedupeKey(dedupeKey))!;
}

/** The notification, written with the refund before its response: read at once, never waited for. */
export async function expectNotification(dedupeKey: string) {
  const row = await notificationByDedupeKey(dedupeKey);
  expect(row, `notification ${dedupeKey}`).toBeDefined();
  return row!;
}

/** Adds a live key to the program, optionally marked for rotation. */
export async function addKey(
  programId: number,
  rotation?: { markedAt: Date; rotateBy: Date },
): Promise<string> {
  const key = await issueApiKey(false);
  await db.insert(programApiKeys).values({
    programId,
    keyHash: key.keyHash,
    keyPrefix: key.keyPrefix,
    rotationMarkedAt: rotation?.markedAt ?? null,
    rotateBy: rotation?.rotateBy ?? null,
  });
  return key.key;
}

/** `round_half_up(commission * refunded / sale)`, all of it once the sale is fully refunded (README). */
export function expectedDeduction(commissionCents: number, refundedCents: number, saleCents: number): number {
  if (refundedCents >= saleCents) return commissionCents;
  const numerator = BigInt(commissionCents) * BigInt(refundedCents);
  return Number((numerator * 2n + BigInt(saleCents)) / (BigInt(saleCents) * 2n));
}

/** Simulates a payout of the commission: marked paid, and the paid amount left the partner balance. */
export async function markPaidOut(commissionId: number, withdrawnCents: number): Promise<void> {
  const c = await commissionRow(commissionId);
  await db.execute(
    sql`update commissions set status = 'paid', paid_out_at = now(), version = version + 1 where id = ${commissionId}`,
  );
  if (withdrawnCents > 0) {
    await db.insert(balanceLedger).values({
      programId: c.programId,
      partnerId: c.partnerId,
      currency: c.currency,
      amountCents: -withdrawnCents,
      cause: "withdrawal",
    });
    await db.execute(
      sql`update partner_balances set balance_cents = balance_cents - ${withdrawnCents}::bigint
          where program_id = ${c.programId} and partner_id = ${c.partnerId} and currency = ${c.currency}`,
    );
  }
}
