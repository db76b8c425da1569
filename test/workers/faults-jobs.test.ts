import { createExecutionContext, createMessageBatch, getQueueResult } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { eq, sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import worker from "../../functions/api/index.ts";
import { approveDueCommissions } from "../../lib/commissions/approve-due-commissions.ts";
import type { NotificationMessage } from "../../lib/notifications/message.ts";
import { notifications } from "../../schema/index.ts";
import { faultCases, withFault } from "./fault-cases.ts";
import { useFaultSwitch } from "./fault-switch.ts";
import { createProgram, db, unique } from "./harness.ts";
import { commissionRow, expectBalanceMatchesLedger, ledgerOfPartner, trackedSale } from "./refund-harness.ts";

/**
 * Injected faults in the background work (README "Injected faults"): the approval job (pending -> approved
 * when the hold ends, with the partner's credit) and the notifications queue consumer. A failed round trip
 * leaves the work for the next run (the job) or has the message retried (the consumer); nothing is
 * half-written and the next run or delivery completes it exactly once.
 */
const faults = useFaultSwitch();

const ROUND_TRIPS = { approval: 2, consumer: 1 } as const;

/**
 * A pending commission due before any other test's (the job approves in `hold_until` order), so that the
 * job run with a page of 1 works on exactly this one.
 */
async function dueCommission() {
  const p = await createProgram({ commissionType: "percent", commissionRate: "20", holdDays: 30 });
  const s = await trackedSale(p, 10_000);
  await db.execute(
    sql`update commissions set hold_until = '1990-01-01T00:00:00Z'::timestamptz - make_interval(secs => ${Math.random() * 1e6}::float8) where id = ${s.commissionId}`,
  );
  return { p, partner: p.partnerIds[0], commissionId: s.commissionId! };
}

const approveOne = () => approveDueCommissions(db, new Date(), 1);

describe("injected faults: the approval job (hold -> approved, credited)", () => {
  it("approving one due commission makes the budgeted round trips", async () => {
    const c = await dueCommission();
    expect(await faults.roundTripsOf(approveOne)).toBe(ROUND_TRIPS.approval);
    expect(await commissionRow(c.commissionId)).toMatchObject({ status: "approved" });
  });

  it.each(faultCases(ROUND_TRIPS.approval))("%s at round trip %i", async (name, ordinal, fault) => {
    const c = await dueCommission();
    const outcome = await withFault(faults, fault, ordinal, () =>
      approveOne().then(
        (result) => ({ result }),
        (error: unknown) => ({ error }),
      ),
    );
    const written = ordinal === 2 && name === "lost answer";
    if (ordinal === 1) {
      // The read failed: the run fails (the cron logs it) and the next run starts over.
      expect(outcome).toHaveProperty("error");
    } else {
      // Whatever came back, the job says what happened: approved, with its notification, only if committed.
      expect(outcome).toHaveProperty("result");
      const { result } = outcome as { result: Awaited<ReturnType<typeof approveOne>> };
      expect(result.approved).toBe(written ? 1 : 0);
      expect(result.notifications.map((n) => n.dedupe_key)).toEqual(
        written ? [`commission:${c.commissionId}:approved`] : [],
      );
    }
    expect(await commissionRow(c.commissionId)).toMatchObject(
      written
        ? { status: "approved", creditedAt: expect.any(Date) }
        : { status: "pending", creditedAt: null },
    );
    expect(await expectBalanceMatchesLedger(c.p.programId, c.partner)).toBe(written ? 2000 : 0);

    const rerun = await approveOne();
    expect(rerun.notifications.some((n) => n.payload.commission_id === c.commissionId)).toBe(!written);
    expect(await commissionRow(c.commissionId)).toMatchObject({ status: "approved" });
    expect(await ledgerOfPartner(c.p.programId, c.partner)).toHaveLength(1);
    expect(await expectBalanceMatchesLedger(c.p.programId, c.partner)).toBe(2000);
  });
});

function message(programId: number, recipientId: number): NotificationMessage {
  return {
    recipient_type: "partner",
    recipient_id: recipientId,
    program_id: programId,
    kind: "commission_approved",
    payload: { commission_id: 1, amount_cents: 100, currency: "USD" },
    dedupe_key: unique("faults"),
  };
}

async function deliver(body: NotificationMessage, attempts: number) {
  const batch = createMessageBatch<unknown>("affiliate-notifications", [
    { id: `m${attempts}`, timestamp: new Date(), attempts, body },
  ]);
  const ctx = createExecutionContext();
  await worker.queue(batch, env, ctx);
  return getQueueResult(batch, ctx);
}

const rowsFor = (dedupeKey: string) =>
  db.select().from(notifications).where(eq(notifications.dedupeKey, dedupeKey));

describe("injected faults: the notifications queue consumer", () => {
  it("one message is one round trip, and so is a batch of them", async () => {
    const p = await createProgram();
    expect(await faults.roundTripsOf(() => deliver(message(p.programId, p.partnerIds[0]), 1))).toBe(
      ROUND_TRIPS.consumer,
    );
    const sent = [1, 2, 3].map(() => message(p.programId, p.partnerIds[0]));
    const batch = createMessageBatch<unknown>(
      "affiliate-notifications",
      sent.map((body, i) => ({ id: `b${i}`, timestamp: new Date(), attempts: 1, body })),
    );
    const ctx = createExecutionContext();
    expect(await faults.roundTripsOf(() => worker.queue(batch, env, ctx))).toBe(ROUND_TRIPS.consumer);
    expect((await getQueueResult(batch, ctx)).explicitAcks.sort()).toEqual(["b0", "b1", "b2"]);
    for (const body of sent) expect(await rowsFor(body.dedupe_key)).toHaveLength(1);
  });

  it.each(faultCases(ROUND_TRIPS.consumer))("%s at round trip %i", async (name, ordinal, fault) => {
    const p = await createProgram();
    const sent = message(p.programId, p.partnerIds[0]);
    const first = await withFault(faults, fault, ordinal, () => deliver(sent, 1));
    // Not acknowledged: the queue redelivers it (with backoff).
    expect(first.explicitAcks).toEqual([]);
    expect(first.retryMessages).toEqual([expect.objectContaining({ msgId: "m1" })]);
    expect(await rowsFor(sent.dedupe_key)).toHaveLength(name === "lost answer" ? 1 : 0);

    const redelivery = await deliver(sent, 2);
    expect(redelivery.explicitAcks).toEqual(["m2"]);
    expect(redelivery.retryMessages).toEqual([]);
    expect(await rowsFor(sent.dedupe_key)).toHaveLength(1);
  });
});
