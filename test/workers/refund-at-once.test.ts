/**
 * The refund the database decides and writes at once (`lib/refunds/refund-at-once.ts`) against the refund read,
 * decided in TypeScript and written the usual way: the same refund on twin programs (same terms, same sale, the
 * same clock) must answer the same and leave the same rows: the sale's refunded amount, the refund row, the
 * commission, the partner's ledger and balance, the notifications and the webhook events.
 */
import { asc, eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { sha256Hex } from "../../lib/auth/api-keys.ts";
import { createLogger } from "../../lib/log.ts";
import { applyRefund, type RefundOutcome } from "../../lib/refunds/apply-refund.ts";
import { decideRefund, type RefundIntent, repeatOf } from "../../lib/refunds/decide-refund.ts";
import { refundDecidedAtOnce } from "../../lib/refunds/refund-at-once.ts";
import { readRefundFacts } from "../../lib/refunds/refund-store.ts";
import { commissions, notifications, refunds, saleEvents, webhookEvents } from "../../schema/index.ts";
import type { CommissionType } from "../../schema/programs.ts";
import { createProgram, db, type ProgramFixture } from "./harness.ts";
import { markPaidOut, refund, trackedSale } from "./refund-harness.ts";
import { balanceOf, click, ledgerOf } from "./sale-harness.ts";

const log = createLogger({ test: "refund-at-once" });

interface Scenario {
  name: string;
  program?: { commissionType?: CommissionType; commissionRate?: string; holdDays?: number };
  saleCents?: number;
  /** The sale refunded: a new customer's (its commission paid) unless a returning customer's (none). */
  returningCustomer?: boolean;
  /** Before the refund, on each twin: earlier refunds, a payout. */
  before?: (p: ProgramFixture, sale: { transactionId: string; commissionId: number | null }) => Promise<void>;
  intent: Partial<RefundIntent>;
  /** The database decides it (else it leaves it to the rules, which write nothing here). */
  atOnce: boolean;
}

const refunded = async (p: ProgramFixture, body: Record<string, unknown>) =>
  expect((await refund(p, body)).status).toBe(200);

const scenarios: Scenario[] = [
  {
    name: "a partial refund with a refund_id, credited commission",
    intent: { amountCents: 1000, refundId: "r1" },
    atOnce: true,
  },
  {
    name: "a further partial refund: the reduction from the cumulative amount, rounded half up",
    program: { commissionRate: "33.3333" },
    saleCents: 999,
    before: (p, s) =>
      refunded(p, { transaction_id: s.transactionId, refund_amount_cents: 333, refund_id: "a" }),
    intent: { amountCents: 333, refundId: "b" },
    atOnce: true,
  },
  { name: "a full refund (amount omitted)", intent: {}, atOnce: true },
  { name: "a refund of 0: everything left", intent: { amountCents: 0, refundId: "zero" }, atOnce: true },
  {
    name: "more than is left: capped, reversed",
    before: (p, s) =>
      refunded(p, { transaction_id: s.transactionId, refund_amount_cents: 9000, refund_id: "a" }),
    intent: { amountCents: 5000, refundId: "b" },
    atOnce: true,
  },
  {
    name: "a pending commission: cancelled whole, nothing taken",
    program: { holdDays: 30 },
    intent: { amountCents: 2500 },
    atOnce: true,
  },
  {
    name: "a paid-out commission: flagged, and the advertiser told",
    before: async (_p, s) => markPaidOut(s.commissionId as number, 1000),
    intent: { amountCents: 4000, refundId: "r", reason: "chargeback", refundReason: "  disputed  " },
    atOnce: true,
  },
  {
    name: "a fixed commission, by amount without refund_id",
    program: { commissionType: "fixed", commissionRate: "7.77" },
    intent: { amountCents: 3333, refundReason: " " },
    atOnce: true,
  },
  {
    name: "a sale without commission (a returning customer's, one-time terms)",
    returningCustomer: true,
    intent: { amountCents: 100 },
    atOnce: true,
  },
  {
    name: "a repeat by refund_id (skipped)",
    before: (p, s) =>
      refunded(p, { transaction_id: s.transactionId, refund_amount_cents: 100, refund_id: "same" }),
    intent: { amountCents: 100, refundId: "same" },
    atOnce: false,
  },
  {
    name: "a repeat by amount (skipped)",
    before: (p, s) => refunded(p, { transaction_id: s.transactionId, refund_amount_cents: 100 }),
    intent: { amountCents: 100 },
    atOnce: false,
  },
  {
    name: "a reversed commission (skipped)",
    before: (p, s) => refunded(p, { transaction_id: s.transactionId }),
    intent: { amountCents: 100, refundId: "late" },
    atOnce: false,
  },
];

/** A webhook's data without what differs between twins: ids and timestamps (`id`, `*_id`, `*_at`). */
function withoutIdsAndTimes(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutIdsAndTimes);
  if (value === null || typeof value !== "object") return value;
  return Object.fromEntries(
    Object.entries(value)
      .filter(([key]) => !/(^id$|_id$|_at$)/.test(key))
      .map(([key, inner]) => [key, withoutIdsAndTimes(inner)]),
  );
}

/** A program's rows after the refund, ids as positions and timestamps dropped (both twins' clocks differ). */
async function rowsOf(p: ProgramFixture, saleId: number) {
  const partner = (id: number | null) => (id === null ? null : p.partnerIds.indexOf(id));
  const [sale] = await db.select().from(saleEvents).where(eq(saleEvents.id, saleId));
  const commission = (await db.select().from(commissions).where(eq(commissions.saleId, saleId)))[0];
  return {
    refundedCents: sale?.refundedCents,
    refunds: (await db.select().from(refunds).where(eq(refunds.saleId, saleId)).orderBy(asc(refunds.id))).map(
      (r) => ({
        amountCents: r.amountCents,
        requestedCents: r.requestedCents,
        refundId: r.refundId,
        idempotencyKey: r.idempotencyKey,
        reason: r.reason,
        refundReason: r.refundReason,
        refundedTotalCents: r.refundedTotalCents,
        deductionCents: r.deductionCents,
        commission: r.commissionId === null ? null : r.commissionId === commission?.id,
      }),
    ),
    commission: commission && {
      status: commission.status,
      amountCents: commission.amountCents,
      deductedCents: commission.deductedCents,
      version: commission.version,
      needsManualReview: commission.needsManualReview,
    },
    ledger: (await ledgerOf(p.programId)).map((l) => ({
      partner: partner(l.partnerId),
      amountCents: l.amountCents,
    })),
    balance: await balanceOf(p.programId, p.partnerIds[0]),
    notifications: (
      await db
        .select()
        .from(notifications)
        .where(eq(notifications.programId, p.programId))
        .orderBy(asc(notifications.id))
    ).map((n) => {
      const payload = n.payload as Record<string, unknown>;
      return {
        recipient: n.recipientType,
        recipientId:
          n.recipientType === "partner" ? partner(n.recipientId) : n.recipientId === p.advertiserId,
        program: n.programId === p.programId,
        kind: n.kind,
        payload: {
          ...payload,
          commission_id: payload.commission_id === commission?.id,
          ...("partner_id" in payload ? { partner_id: partner(payload.partner_id as number) } : {}),
        },
      };
    }),
    webhookEvents: (
      await db
        .select()
        .from(webhookEvents)
        .where(eq(webhookEvents.programId, p.programId))
        .orderBy(asc(webhookEvents.id))
    ).map((e) => ({ type: e.type, data: withoutIdsAndTimes(e.data) })),
  };
}

describe("the refund decided at once by the database, against the rules in TypeScript", () => {
  for (const scenario of scenarios) {
    it(`${scenario.name}: the same answer and rows`, async () => {
      const twins = await Promise.all([createProgram(scenario.program), createProgram(scenario.program)]);
      const sales = [];
      for (const p of twins) {
        let s = await trackedSale(p, scenario.saleCents ?? 10_000);
        if (scenario.returningCustomer) {
          const clickId = await click(p);
          await trackedSale(p, 500, { clickId });
          s = await trackedSale(p, 2000, { clickId });
          expect(s.commissionId).toBeNull();
        }
        await scenario.before?.(p, s);
        sales.push(s);
      }
      const intent: RefundIntent = {
        amountCents: null,
        refundId: null,
        reason: "refund",
        refundReason: null,
        ...scenario.intent,
      };
      const now = new Date();
      const [atOnceProgram, usualProgram] = twins;
      const [atOnceSale, usualSale] = sales;

      const decided = await refundDecidedAtOnce(
        db,
        {
          keyHash: await sha256Hex(atOnceProgram.apiKey),
          transactionId: atOnceSale!.transactionId,
          intent,
          now,
        },
        log,
        () => undefined,
      );
      expect(decided?.outcome !== undefined).toBe(scenario.atOnce);
      const atOnceOutcome: RefundOutcome | null =
        decided?.outcome ??
        (decided?.read.facts ? outcomeWithoutWrite(decideRefund(decided.read.facts, intent)) : null);

      const read = await readRefundFacts(
        db,
        await sha256Hex(usualProgram.apiKey),
        usualSale!.transactionId,
        repeatOf(intent),
      );
      const usualOutcome = await applyRefund(db, read.facts!, read.parties!, intent, now);

      expect(normalized(atOnceOutcome)).toEqual(normalized(usualOutcome));
      expect(await rowsOf(atOnceProgram, atOnceSale!.saleId)).toEqual(
        await rowsOf(usualProgram, usualSale!.saleId),
      );
    });
  }
});

/** What the rules answer without writing (a skipped refund); a decision that writes has no place here. */
function outcomeWithoutWrite(decision: ReturnType<typeof decideRefund>): RefundOutcome {
  if (decision.outcome === "skipped")
    return { status: "skipped", reason: decision.reason, commissionId: decision.commissionId };
  if (decision.outcome === "awaiting_commission") return { status: "awaiting_commission" };
  throw new Error(`the database left a refund that writes (${decision.outcome}) to the rules`);
}

function normalized(outcome: RefundOutcome | null) {
  if (outcome && "commissionId" in outcome)
    return { ...outcome, commissionId: outcome.commissionId === null ? null : "c" };
  return outcome;
}
