import { eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { customers, notifications, programs, refunds } from "../../schema/index.ts";
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
 * time: the spec's 500 (or, where the database refused a sale, a refund or a lead it was deciding at once, the same
 * request decided anew the usual way), nothing half-written, a retry gets the spec's answer, and the books
 * balance. A sale or a lead the database leaves to the rules is read and written the usual way: its two round
 * trips fail in turn too.
 */
const faults = useFaultSwitch();

/**
 * The round trips of each request when it succeeds (DESIGN.md section 2 budget; asserted below): a sale, a
 * refund and a lead the database decides at once make one, a sale or a lead left to the rules two.
 */
const ROUND_TRIPS = { sale: 1, saleLeftToTheRules: 2, refund: 1, lead: 1, leadLeftToTheRules: 2 } as const;

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

/**
 * A program whose sales the database leaves to the rules once the customer has its first commission (a
 * recurring period that ends), with such a customer's click: its sales are read and written the usual way.
 */
async function customerLeftToTheRules(): Promise<{ p: ProgramFixture; clickId: string }> {
  const p = await createProgram({ commissionType: "recurring_percent", commissionRate: "10" });
  await db.update(programs).set({ durationMonths: 12 }).where(eq(programs.id, p.programId));
  const clickId = await click(p);
  expect((await sale(p, { transaction_id: txn(), amount_cents: 5000, click_id: clickId })).status).toBe(200);
  return { p, clickId };
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
    const left = await customerLeftToTheRules();
    expect(
      await faults.roundTripsOf(() =>
        sale(left.p, { transaction_id: txn(), amount_cents: 1000, click_id: left.clickId }),
      ),
    ).toBe(ROUND_TRIPS.saleLeftToTheRules);
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
    await db
      .insert(customers)
      .values({ programId: p.programId, partnerId: p.partnerIds[0], customerKey: "k" });
    expect(await faults.roundTripsOf(() => postJson(leadPath, { customer_key: "k" }, bearer(p.apiKey)))).toBe(
      ROUND_TRIPS.leadLeftToTheRules,
    );
  });
});

describe("injected faults: POST /api/v1/track/sale, decided at once", () => {
  it.each(faultCases(ROUND_TRIPS.sale))("%s at round trip %i", async (name, ordinal, fault) => {
    const p = await createProgram({ commissionType: "percent", commissionRate: "10" });
    const clickId = await click(p);
    const body = { transaction_id: txn(), amount_cents: 5000, click_id: clickId };
    const response = await withFault(faults, fault, ordinal, () => sale(p, body));

    // Refused by the database (the value refused): rolled back, and decided anew the usual way, which the
    // database takes this time. Lost: committed whole. Otherwise nothing written.
    const decidedAnew = name === "constraint error";
    const written = decidedAnew || name === "lost answer";
    if (decidedAnew) {
      expect(response.status).toBe(200);
      expect(response.body).toMatchObject({ success: true, message: "Sale recorded and commission created" });
    } else {
      expect(response.status).toBe(500);
      expect(response.body).toEqual(internalError("Sale tracking failed", "internal_error"));
    }
    const sales = await salesOf(p.programId);
    const commissions = await commissionsOf(p.programId);
    if (written) {
      expect(sales).toHaveLength(1);
      expect(commissions).toHaveLength(1);
      expect(commissions[0]).toMatchObject({ saleId: sales[0]?.id, amountCents: 500 });
    } else {
      expect(sales).toEqual([]);
      expect(commissions).toEqual([]);
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
    expect(await salesOf(p.programId)).toHaveLength(1);
    expect(await commissionsOf(p.programId)).toHaveLength(1);
    await expectBooksBalance(p);
    expect(await expectBalanceMatchesLedger(p.programId, p.partnerIds[0])).toBe(500);
  });
});

describe("injected faults: POST /api/v1/track/sale, left to the rules", () => {
  it.each(faultCases(ROUND_TRIPS.saleLeftToTheRules))("%s at round trip %i", async (name, ordinal, fault) => {
    const { p, clickId } = await customerLeftToTheRules();
    const body = { transaction_id: txn(), amount_cents: 5000, click_id: clickId };
    const response = await withFault(faults, fault, ordinal, () => sale(p, body));

    // The first round trip is the call that would decide the sale at once and reads it: refused by the
    // database, the sale is read again and decided the usual way, which the database takes this time.
    const decidedAnew = ordinal === 1 && name === "constraint error";
    const written =
      decidedAnew ||
      (ordinal === ROUND_TRIPS.saleLeftToTheRules && (name === "lost answer" || name === "constraint error"));
    const commissionFailed = ordinal === ROUND_TRIPS.saleLeftToTheRules && name === "constraint error";
    if (decidedAnew) {
      expect(response.status).toBe(200);
      expect(response.body).toMatchObject({ success: true, message: "Sale recorded and commission created" });
    } else {
      expect(response.status).toBe(500);
      expect(response.body).toEqual(
        internalError(
          commissionFailed ? "Failed to create commission" : "Sale tracking failed",
          "internal_error",
        ),
      );
    }

    // The customer's first sale, and this one if it was written.
    const sales = await salesOf(p.programId);
    const commissions = await commissionsOf(p.programId);
    const thisSale = sales.filter((s) => s.processorEventId === body.transaction_id);
    if (!written) {
      expect(thisSale).toEqual([]);
      expect(commissions).toHaveLength(1);
    } else if (commissionFailed) {
      // The spec's fallback: the sale is kept (its id consumed), flagged for the scheduled repair.
      expect(thisSale).toHaveLength(1);
      expect(thisSale[0]).toMatchObject({ needsCommission: true });
      expect(commissions).toHaveLength(1);
    } else {
      // The write committed whole: sale, commission and credit together.
      expect(thisSale).toHaveLength(1);
      expect(commissions.filter((c) => c.saleId === thisSale[0]?.id)).toMatchObject([{ amountCents: 500 }]);
    }
    await expectBooksBalance(p);

    const retry = await sale(p, body);
    if (written) {
      expect(retry.status).toBe(409);
      expect(retry.body).toMatchObject({
        error: { code: "duplicate_transaction", details: { sale_id: thisSale[0]?.id } },
      });
    } else {
      expect(retry.status).toBe(200);
      expect(retry.body).toMatchObject({ success: true, sale_id: expect.any(Number) });
    }
    if (commissionFailed) await runCron();
    expect(await salesOf(p.programId)).toHaveLength(2);
    expect(await commissionsOf(p.programId)).toHaveLength(2);
    await expectBooksBalance(p);
    expect(await expectBalanceMatchesLedger(p.programId, p.partnerIds[0])).toBe(1000);
  });
});

describe("injected faults: POST /api/v1/track/refund", () => {
  it.each(faultCases(ROUND_TRIPS.refund))("%s at round trip %i", async (name, ordinal, fault) => {
    const p = await createProgram({ commissionType: "percent", commissionRate: "10" });
    const s = await trackedSale(p, 10_000);
    expect(await expectBalanceMatchesLedger(p.programId, p.partnerIds[0])).toBe(1000);
    const body = { transaction_id: s.transactionId, refund_amount_cents: 5000, refund_id: `re_${ordinal}` };
    const response = await withFault(faults, fault, ordinal, () => refund(p, body));

    // Refused by the database (the value refused): rolled back, and decided anew the usual way, which the
    // database takes this time. Lost: committed whole. Otherwise nothing written.
    const decidedAnew = name === "constraint error";
    const written = decidedAnew || name === "lost answer";
    if (decidedAnew) {
      expect(response.status).toBe(200);
      expect(response.body).toMatchObject({ success: true, status: "refunded", deductionAmount: 500 });
    } else {
      expect(response.status).toBe(500);
      expect(response.body).toEqual(internalError("Refund tracking failed", "internal_error"));
    }
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

describe("injected faults: POST /api/v1/track/lead, decided at once", () => {
  it.each(faultCases(ROUND_TRIPS.lead))("%s at round trip %i", async (name, ordinal, fault) => {
    const p = await createProgram();
    const clickId = await recordClick(p.links[0]);
    const body = { click_id: clickId, customer_key: `cust-${ordinal}`, email: "buyer@example.com" };
    const response = await withFault(faults, fault, ordinal, () =>
      postJson(leadPath, body, bearer(p.apiKey)),
    );

    // Refused by the database (the value refused): rolled back, and decided anew the usual way, which the
    // database takes this time. Lost: committed whole. Otherwise nothing written.
    const decidedAnew = name === "constraint error";
    const written = decidedAnew || name === "lost answer";
    if (decidedAnew) {
      expect(response.status).toBe(200);
      expect(response.body).toEqual({ success: true, message: "Lead recorded" });
    } else {
      expect(response.status).toBe(500);
      expect(response.body).toEqual(internalError("Lead tracking failed"));
    }
    await expectLeadRetried(p, body, written, []);
  });
});

describe("injected faults: POST /api/v1/track/lead, left to the rules", () => {
  it.each(faultCases(ROUND_TRIPS.leadLeftToTheRules))("%s at round trip %i", async (name, ordinal, fault) => {
    // A customer nobody has signed up, named by its customer_key alone: a lead the database leaves to the rules.
    const p = await createProgram();
    const clickId = await recordClick(p.links[0]);
    const body = { customer_key: `cust-${ordinal}`, email: "buyer@example.com" };
    await db.insert(customers).values({
      programId: p.programId,
      partnerId: p.partnerIds[0],
      clickId,
      clickedAt: new Date(),
      customerKey: body.customer_key,
    });
    const response = await withFault(faults, fault, ordinal, () =>
      postJson(leadPath, body, bearer(p.apiKey)),
    );

    // Not the database's to decide (no click named): read, then written the usual way. Lost: committed whole.
    const written = ordinal === ROUND_TRIPS.leadLeftToTheRules && name === "lost answer";
    expect(response.status).toBe(500);
    expect(response.body).toEqual(internalError("Lead tracking failed"));
    await expectLeadRetried(p, body, written, [{ status: "clicked" }]);
  });
});

describe("injected faults: POST /api/v1/track/lead, declined by the database and written by the rules", () => {
  it.each(faultCases(ROUND_TRIPS.leadLeftToTheRules))("%s at round trip %i", async (name, ordinal, fault) => {
    // A test key's lead: the call that would decide it at once reads it and leaves it to the rules, which write
    // the test lead the usual way.
    const p = await createProgram();
    const clickId = await recordClick(p.links[0]);
    const body = { click_id: clickId };
    const response = await withFault(faults, fault, ordinal, () =>
      postJson(leadPath, body, bearer(p.testApiKey)),
    );

    // Refused by the database at the first call: read, decided and written anew (200). Lost at the write:
    // committed. Otherwise nothing written.
    const decidedAnew = ordinal === 1 && name === "constraint error";
    const written = decidedAnew || (ordinal === ROUND_TRIPS.leadLeftToTheRules && name === "lost answer");
    if (decidedAnew) {
      expect(response.status).toBe(200);
      expect(response.body).toMatchObject({ success: true, message: "Test lead recorded" });
    } else {
      expect(response.status).toBe(500);
      expect(response.body).toEqual(internalError("Lead tracking failed"));
    }
    expect(await leadEventsOfProgram(p.programId)).toHaveLength(written ? 1 : 0);
    // A test lead makes no customer, and each test lead sent is recorded: the retry adds one.
    const retry = await postJson(leadPath, body, bearer(p.testApiKey));
    expect(retry.status).toBe(200);
    expect(await leadEventsOfProgram(p.programId)).toMatchObject(
      Array.from({ length: written ? 2 : 1 }, () => ({ isTest: true, clickId })),
    );
    expect(await customersOfProgram(p.programId)).toEqual([]);
  });
});

/**
 * The lead's event and its customer's key, written or not; then the same lead sent again: a written lead
 * answers 400 (the spec: a retried lead may answer status-cannot-be-updated, safe to ignore), one that was not
 * is written now.
 */
async function expectLeadRetried(
  p: ProgramFixture,
  body: { customer_key: string },
  written: boolean,
  /** The program's customers before the lead. */
  before: { status: "clicked" }[],
): Promise<void> {
  const settled = { status: "lead", customerKey: body.customer_key };
  expect(await leadEventsOfProgram(p.programId)).toHaveLength(written ? 1 : 0);
  expect(await customersOfProgram(p.programId)).toMatchObject(written ? [settled] : before);
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
  expect(await customersOfProgram(p.programId)).toMatchObject([settled]);
}
