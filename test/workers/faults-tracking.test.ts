import { eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { notifications, refunds } from "../../schema/index.ts";
import { faultCases, withFault } from "./fault-cases.ts";
import { useFaultSwitch } from "./fault-switch.ts";
import { createProgram, db, type ProgramFixture, postJson } from "./harness.ts";
import { bearer, customersOfProgram, leadEventsOfProgram, leadPath, recordClick } from "./lead-helpers.ts";
import { commissionRow, expectBalanceMatchesLedger, refund, trackedSale } from "./refund-harness.ts";
import { runCron } from "./run-cron.ts";
import { click, commissionsOf, sale, salesOf, txn } from "./sale-harness.ts";

/**
 * Injected faults (README "Injected faults"): every database round trip of sale, refund and lead fails in
 * turn, as an error, a timeout or a lost answer (the write committed, the answer never came back). Each
 * time: the spec's 500, nothing half-written, a retry gets the spec's answer, and the books balance.
 */
const faults = useFaultSwitch();

/** The round trips of each request when it succeeds (DESIGN.md section 2 budget; asserted below). */
const ROUND_TRIPS = { sale: 2, refund: 2, lead: 2 } as const;

function notificationsOf(programId: number) {
  return db.select().from(notifications).where(eq(notifications.programId, programId));
}

function internalError(message: string, code?: "internal_error") {
  return {
    data: null,
    error: { status: 500, name: "InternalServerError", message, details: {}, ...(code ? { code } : {}) },
  };
}

/** One sale per payment, at most one commission per sale, and every partner's ledger sums to its balance. */
async function expectBooksBalance(p: ProgramFixture): Promise<void> {
  const sales = await salesOf(p.programId);
  expect(new Set(sales.map((s) => s.processorEventId)).size).toBe(sales.length);
  const commissions = await commissionsOf(p.programId);
  expect(new Set(commissions.map((c) => c.saleId)).size).toBe(commissions.length);
  for (const partner of p.partnerIds) await expectBalanceMatchesLedger(p.programId, partner);
}

describe("injected faults: the round trips each request makes when nothing fails", () => {
  it("sale, refund and lead make their budgeted round trips (the ordinals the matrix iterates)", async () => {
    const p = await createProgram();
    const clickId = await click(p);
    expect(
      await faults.roundTripsOf(() =>
        sale(p, { transaction_id: txn(), amount_cents: 1000, click_id: clickId }),
      ),
    ).toBe(ROUND_TRIPS.sale);
    const s = await trackedSale(p, 1000);
    expect(
      await faults.roundTripsOf(() =>
        refund(p, { transaction_id: s.transactionId, refund_amount_cents: 100, refund_id: "r" }),
      ),
    ).toBe(ROUND_TRIPS.refund);
    const leadClick = await recordClick(p.links[0]);
    expect(
      await faults.roundTripsOf(() =>
        postJson(leadPath, { click_id: leadClick, customer_key: "c" }, bearer(p.apiKey)),
      ),
    ).toBe(ROUND_TRIPS.lead);
  });
});

describe("injected faults: POST /api/v1/track/sale", () => {
  it.each(faultCases(ROUND_TRIPS.sale))("%s at round trip %i", async (name, ordinal, fault) => {
    const p = await createProgram({ commissionType: "percent", commissionRate: "10" });
    const clickId = await click(p);
    const body = { transaction_id: txn(), amount_cents: 5000, click_id: clickId };
    const response = await withFault(faults, fault, ordinal, () => sale(p, body));

    const written = ordinal === ROUND_TRIPS.sale && (name === "lost answer" || name === "constraint error");
    const commissionFailed = ordinal === ROUND_TRIPS.sale && name === "constraint error";
    expect(response.status).toBe(500);
    expect(response.body).toEqual(
      internalError(
        commissionFailed ? "Failed to create commission" : "Sale tracking failed",
        "internal_error",
      ),
    );

    const sales = await salesOf(p.programId);
    const commissions = await commissionsOf(p.programId);
    if (!written) {
      expect(sales).toEqual([]);
      expect(commissions).toEqual([]);
    } else if (commissionFailed) {
      // The spec's fallback: the sale is kept (its id consumed), flagged for the scheduled repair.
      expect(sales).toHaveLength(1);
      expect(sales[0]).toMatchObject({ needsCommission: true });
      expect(commissions).toEqual([]);
    } else {
      // The write committed whole: sale, commission and credit together.
      expect(sales).toHaveLength(1);
      expect(commissions).toHaveLength(1);
      expect(commissions[0]).toMatchObject({ saleId: sales[0]?.id, amountCents: 500 });
    }
    await expectBooksBalance(p);

    const retry = await sale(p, body);
    if (written) {
      expect(retry.status).toBe(409);
      expect(retry.body).toMatchObject({
        error: { code: "duplicate_transaction", details: { sale_id: sales[0]?.id } },
      });
    } else {
      expect(retry.status).toBe(200);
      expect(retry.body).toMatchObject({ success: true, sale_id: expect.any(Number) });
    }
    if (commissionFailed) await runCron();
    expect(await salesOf(p.programId)).toHaveLength(1);
    expect(await commissionsOf(p.programId)).toHaveLength(1);
    await expectBooksBalance(p);
    expect(await expectBalanceMatchesLedger(p.programId, p.partnerIds[0])).toBe(500);
  });
});

describe("injected faults: POST /api/v1/track/refund", () => {
  it.each(faultCases(ROUND_TRIPS.refund))("%s at round trip %i", async (name, ordinal, fault) => {
    const p = await createProgram({ commissionType: "percent", commissionRate: "10" });
    const s = await trackedSale(p, 10_000);
    expect(await expectBalanceMatchesLedger(p.programId, p.partnerIds[0])).toBe(1000);
    const body = { transaction_id: s.transactionId, refund_amount_cents: 5000, refund_id: `re_${ordinal}` };
    const response = await withFault(faults, fault, ordinal, () => refund(p, body));

    const written = ordinal === ROUND_TRIPS.refund && name === "lost answer";
    expect(response.status).toBe(500);
    expect(response.body).toEqual(internalError("Refund tracking failed", "internal_error"));
    const stored = await db.select().from(refunds).where(eq(refunds.saleId, s.saleId));
    expect(stored).toHaveLength(written ? 1 : 0);
    expect(await commissionRow(s.commissionId!)).toMatchObject({ deductedCents: written ? 500 : 0 });
    expect(await expectBalanceMatchesLedger(p.programId, p.partnerIds[0])).toBe(written ? 500 : 1000);
    // The partner's notification is written with the refund or not at all: one whose answer was lost is
    // not lost with it (the retry below is skipped and reports nothing).
    expect(await notificationsOf(p.programId)).toHaveLength(written ? 1 : 0);

    // The spec: a 500 can be retried with the same refund_id; an applied refund is skipped.
    const retry = await refund(p, body);
    expect(retry.status).toBe(200);
    expect(retry.body).toMatchObject(
      written
        ? { success: true, status: "skipped", commission_id: s.commissionId }
        : { success: true, status: "refunded", deductionAmount: 500, commission_id: s.commissionId },
    );
    expect(await db.select().from(refunds).where(eq(refunds.saleId, s.saleId))).toHaveLength(1);
    expect(await commissionRow(s.commissionId!)).toMatchObject({ deductedCents: 500 });
    expect(await expectBalanceMatchesLedger(p.programId, p.partnerIds[0])).toBe(500);
    expect(await notificationsOf(p.programId)).toMatchObject([
      { recipientType: "partner", recipientId: p.partnerIds[0], kind: "commission_refunded" },
    ]);
    await expectBooksBalance(p);
  });
});

describe("injected faults: POST /api/v1/track/lead", () => {
  it.each(faultCases(ROUND_TRIPS.lead))("%s at round trip %i", async (name, ordinal, fault) => {
    const p = await createProgram();
    const clickId = await recordClick(p.links[0]);
    const body = { click_id: clickId, customer_key: `cust-${ordinal}`, email: "buyer@example.com" };
    const response = await withFault(faults, fault, ordinal, () =>
      postJson(leadPath, body, bearer(p.apiKey)),
    );

    const written = ordinal === ROUND_TRIPS.lead && name === "lost answer";
    expect(response.status).toBe(500);
    expect(response.body).toEqual(internalError("Lead tracking failed"));
    expect(await leadEventsOfProgram(p.programId)).toHaveLength(written ? 1 : 0);
    // The customer is created by the lead's write, with its key: none before, or the settled one.
    expect(await customersOfProgram(p.programId)).toMatchObject(
      written ? [{ status: "lead", customerKey: body.customer_key }] : [],
    );

    // The spec: a retried lead may then answer 400 status-cannot-be-updated (safe to ignore).
    const retry = await postJson(leadPath, body, bearer(p.apiKey));
    if (written) {
      expect(retry.status).toBe(400);
      expect(retry.body).toMatchObject({
        data: null,
        error: { status: 400, message: "Customer status cannot be updated to lead. Current status: lead" },
      });
    } else {
      expect(retry.status).toBe(200);
      expect(retry.body).toMatchObject({ success: true });
    }
    expect(await leadEventsOfProgram(p.programId)).toHaveLength(1);
    expect(await customersOfProgram(p.programId)).toMatchObject([
      { status: "lead", customerKey: body.customer_key },
    ]);
  });
});
