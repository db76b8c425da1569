import { sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { approveDueCommissions } from "../../lib/commissions/approve-due-commissions.ts";
import type { NotificationMessage } from "../../lib/notifications/message.ts";
import { createProgram, db, type ProgramFixture } from "./harness.ts";
import {
  commissionRow,
  expectBalanceMatchesLedger,
  expectQueuedNotification,
  ledgerOfPartner,
  refund,
  trackedSale,
} from "./refund-harness.ts";
import { runCron } from "./run-cron.ts";
import { balanceOf } from "./sale-harness.ts";

/**
 * `approveDueCommissions` approves every due commission of the (shared) database. So that it never
 * approves another test's commission early, the injected time is at most a minute ahead of the real one:
 * each test moves its own commission's `hold_until` to a minute from now (out of reach of any real cron
 * run meanwhile) and approves "at" that instant.
 */
async function pendingCommission(p: ProgramFixture, amountCents = 10_000) {
  const s = await trackedSale(p, amountCents);
  const holdUntil = new Date(Date.now() + 60_000);
  await db.execute(
    sql`update commissions set hold_until = ${holdUntil.toISOString()}::timestamptz where id = ${s.commissionId}`,
  );
  expect(await commissionRow(s.commissionId!)).toMatchObject({ status: "pending", creditedAt: null });
  return { ...s, commissionId: s.commissionId!, holdUntil };
}

/** Runs the approval until nothing due is left (it works in pages of 200), collecting notifications. */
async function approveAt(now: Date): Promise<NotificationMessage[]> {
  const notifications: NotificationMessage[] = [];
  for (;;) {
    const result = await approveDueCommissions(db, now);
    notifications.push(...result.notifications);
    if (result.approved < 200) return notifications;
  }
}

const forCommission = (notifications: NotificationMessage[], commissionId: number) =>
  notifications.filter((n) => n.payload.commission_id === commissionId);

describe("approveDueCommissions", () => {
  it("leaves a commission pending before hold_until, approves and credits it once at hold_until", async () => {
    const p = await createProgram({ commissionType: "percent", commissionRate: "20", holdDays: 30 });
    const partner = p.partnerIds[0];
    const c = await pendingCommission(p);

    expect(forCommission(await approveAt(new Date()), c.commissionId)).toEqual([]);
    expect(forCommission(await approveAt(new Date(c.holdUntil.getTime() - 1)), c.commissionId)).toEqual([]);
    expect(await commissionRow(c.commissionId)).toMatchObject({
      status: "pending",
      approvedAt: null,
      creditedAt: null,
    });
    expect(await balanceOf(p.programId, partner)).toBe(0);
    expect(await ledgerOfPartner(p.programId, partner)).toEqual([]);

    const sent = forCommission(await approveAt(c.holdUntil), c.commissionId);
    expect(sent).toEqual([
      {
        recipient_type: "partner",
        recipient_id: partner,
        program_id: p.programId,
        kind: "commission_approved",
        payload: { commission_id: c.commissionId, amount_cents: 2000, currency: "USD" },
        dedupe_key: `commission:${c.commissionId}:approved`,
      },
    ]);
    const approved = await commissionRow(c.commissionId);
    expect(approved).toMatchObject({ status: "approved", deductedCents: 0 });
    expect(approved.approvedAt?.getTime()).toBe(c.holdUntil.getTime());
    expect(approved.creditedAt?.getTime()).toBe(c.holdUntil.getTime());
    expect(await balanceOf(p.programId, partner)).toBe(2000);
    expect(
      (await ledgerOfPartner(p.programId, partner)).map((l) => [l.cause, l.amountCents, l.commissionId]),
    ).toEqual([["commission_credit", 2000, c.commissionId]]);

    // A second run finds nothing to do.
    expect(forCommission(await approveAt(new Date(c.holdUntil.getTime() + 1)), c.commissionId)).toEqual([]);
    expect(await balanceOf(p.programId, partner)).toBe(2000);
    expect(await ledgerOfPartner(p.programId, partner)).toHaveLength(1);

    // Credited now: a later refund takes its share from the balance.
    const response = await refund(p, { transaction_id: c.transactionId, refund_amount_cents: 2500 });
    expect(response.body).toMatchObject({ status: "refunded", deductionAmount: 500 });
    expect(await balanceOf(p.programId, partner)).toBe(1500);
    await expectBalanceMatchesLedger(p.programId, partner);
  });

  it("two runs at once credit once", async () => {
    const p = await createProgram({ commissionType: "fixed", commissionRate: "12.34", holdDays: 7 });
    const partner = p.partnerIds[0];
    const c = await pendingCommission(p);
    const [first, second] = await Promise.all([approveAt(c.holdUntil), approveAt(c.holdUntil)]);
    expect([...forCommission(first, c.commissionId), ...forCommission(second, c.commissionId)]).toHaveLength(
      1,
    );
    expect(await commissionRow(c.commissionId)).toMatchObject({ status: "approved" });
    expect(await balanceOf(p.programId, partner)).toBe(1234);
    expect(await ledgerOfPartner(p.programId, partner)).toHaveLength(1);
    await expectBalanceMatchesLedger(p.programId, partner);
  });

  it("never approves a pending commission a refund cancelled", async () => {
    const p = await createProgram({ commissionType: "percent", commissionRate: "20", holdDays: 30 });
    const partner = p.partnerIds[0];
    const partial = await pendingCommission(p);
    const full = await pendingCommission(p);
    expect(
      (await refund(p, { transaction_id: partial.transactionId, refund_amount_cents: 100 })).body,
    ).toMatchObject({ status: "refunded" });
    expect((await refund(p, { transaction_id: full.transactionId })).body).toMatchObject({
      status: "reversed",
    });

    const sent = await approveAt(full.holdUntil);
    expect(forCommission(sent, partial.commissionId)).toEqual([]);
    expect(forCommission(sent, full.commissionId)).toEqual([]);
    expect(await commissionRow(partial.commissionId)).toMatchObject({
      status: "refunded",
      deductedCents: 2000,
      approvedAt: null,
      creditedAt: null,
    });
    expect(await commissionRow(full.commissionId)).toMatchObject({
      status: "reversed",
      approvedAt: null,
      creditedAt: null,
    });
    expect(await balanceOf(p.programId, partner)).toBe(0);
    expect(await ledgerOfPartner(p.programId, partner)).toEqual([]);
  });
});

describe("cron trigger", () => {
  it("approves due commissions and the partner's commission_approved notification is written through the queue", async () => {
    const p = await createProgram({ commissionType: "percent", commissionRate: "10", holdDays: 30 });
    const partner = p.partnerIds[0];
    const s = await trackedSale(p, 4321); // commission 432
    await db.execute(
      sql`update commissions set hold_until = now() - interval '1 second' where id = ${s.commissionId}`,
    );
    await runCron();

    expect(await commissionRow(s.commissionId!)).toMatchObject({ status: "approved" });
    expect(await balanceOf(p.programId, partner)).toBe(432);
    await expectBalanceMatchesLedger(p.programId, partner);
    expect(await expectQueuedNotification(`commission:${s.commissionId}:approved`)).toMatchObject({
      recipientType: "partner",
      recipientId: partner,
      programId: p.programId,
      kind: "commission_approved",
      payload: { commission_id: s.commissionId, amount_cents: 432, currency: "USD" },
    });
  });

  it("notifies every partner when more commissions are due than one queue batch holds (100)", async () => {
    const p = await createProgram({ commissionType: "percent", commissionRate: "10", holdDays: 30 });
    const partner = p.partnerIds[0];
    const count = 130;
    const inserted = await db.execute<{ id: string }>(sql`
      with sales as (
        insert into affiliate_sale_events (processor_event_id, program_id, partner_id, amount_cents, currency)
        select ${`bulk-${crypto.randomUUID()}-`} || g, ${p.programId}::int, ${partner}::int, 1000, 'USD'
        from generate_series(1, ${count}::int) g
        returning id, program_id, partner_id)
      insert into commissions (sale_id, program_id, partner_id, amount_cents, currency, status, hold_until)
      select id, program_id, partner_id, 100, 'USD', 'pending', now() - interval '1 second' from sales
      returning id`);
    const ids = inserted.rows.map((row) => Number(row.id));
    expect(ids).toHaveLength(count);

    const pendingLeft = async () =>
      Number(
        (
          await db.execute<{ n: string }>(
            sql`select count(*) as n from commissions where program_id = ${p.programId} and status = 'pending'`,
          )
        ).rows[0]!.n,
      );
    for (let run = 0; run < 10 && (await pendingLeft()) > 0; run++) await runCron();
    expect(await pendingLeft()).toBe(0);
    expect(await balanceOf(p.programId, partner)).toBe(100 * count);
    await expectBalanceMatchesLedger(p.programId, partner);
    const written = async () =>
      Number(
        (
          await db.execute<{ n: string }>(
            sql`select count(*) as n from notifications
                where kind = 'commission_approved' and program_id = ${p.programId}`,
          )
        ).rows[0]!.n,
      );
    await expect.poll(written, { timeout: 20_000, interval: 250 }).toBe(count);
  }, 60_000);
});
