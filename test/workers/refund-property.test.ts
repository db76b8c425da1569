import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { decideRefund, type RefundFacts, type RefundIntent } from "../../lib/refunds/decide-refund.ts";
import type { CommissionType } from "../../schema/programs.ts";
import { createProgram } from "./harness.ts";
import {
  commissionRow,
  expectBalanceMatchesLedger,
  expectedDeduction,
  refund,
  refundsOfSale,
  saleRow,
  trackedSale,
} from "./refund-harness.ts";
import { balanceOf } from "./sale-harness.ts";

/**
 * Property tests of the refund rules (README: the total reduction of a commission is always
 * `round_half_up(commission * cumulative_refunded / sale)`, all of it once fully refunded; each call deducts
 * the difference; a pending commission is cancelled whole; repeated refunds are skipped).
 */

/** One refund call as the brand sends it, or an exact replay of an earlier call. */
type Step =
  | { kind: "partial"; amount: number; refundId: string | null }
  | { kind: "full"; form: "omitted" | "zero" | "null"; refundId: string | null }
  | { kind: "repeat"; index: number }
  /** An earlier call's amount again, with another (or no) refund_id. */
  | { kind: "sameAmount"; index: number; refundId: string | null };

const refundIdArb = fc.option(fc.constantFrom("re_a", "re_b", "re_c", "re_d"), { nil: null, freq: 3 });

function stepArb(saleCents: number): fc.Arbitrary<Step> {
  return fc.oneof(
    {
      weight: 6,
      arbitrary: fc.record({
        kind: fc.constant("partial" as const),
        // Mostly small shares of the sale, sometimes more than what is left.
        amount: fc.oneof(
          { weight: 4, arbitrary: fc.integer({ min: 1, max: Math.max(1, Math.ceil(saleCents / 4)) }) },
          { weight: 1, arbitrary: fc.integer({ min: 1, max: saleCents + 10 }) },
          { weight: 1, arbitrary: fc.constantFrom(1, 2, 3) },
        ),
        refundId: refundIdArb,
      }),
    },
    {
      weight: 1,
      arbitrary: fc.record({
        kind: fc.constant("full" as const),
        form: fc.constantFrom("omitted" as const, "zero" as const, "null" as const),
        refundId: refundIdArb,
      }),
    },
    { weight: 2, arbitrary: fc.record({ kind: fc.constant("repeat" as const), index: fc.nat() }) },
    {
      weight: 2,
      arbitrary: fc.record({
        kind: fc.constant("sameAmount" as const),
        index: fc.nat(),
        refundId: refundIdArb,
      }),
    },
  );
}

/** The request body of a step; a replay repeats an earlier body exactly. */
function bodiesOf(transactionId: string, steps: Step[]): Array<Record<string, unknown>> {
  const bodies: Array<Record<string, unknown>> = [];
  for (const step of steps) {
    if (step.kind === "repeat") {
      bodies.push(
        bodies.length > 0
          ? { ...bodies[step.index % bodies.length] }
          : { transaction_id: transactionId, refund_amount_cents: 1 },
      );
      continue;
    }
    if (step.kind === "sameAmount") {
      const earlier = bodies.length > 0 ? bodies[step.index % bodies.length]! : {};
      const body: Record<string, unknown> = {
        transaction_id: transactionId,
        refund_amount_cents: earlier.refund_amount_cents ?? 1,
      };
      if (step.refundId !== null) body.refund_id = step.refundId;
      bodies.push(body);
      continue;
    }
    const body: Record<string, unknown> = { transaction_id: transactionId };
    if (step.kind === "partial") body.refund_amount_cents = step.amount;
    else if (step.form === "zero") body.refund_amount_cents = 0;
    else if (step.form === "null") body.refund_amount_cents = null;
    if (step.refundId !== null) body.refund_id = step.refundId;
    bodies.push(body);
  }
  return bodies;
}

/**
 * An independent model of the commission state table (spec section 3, README decisions), written from the
 * rules rather than from the implementation.
 */
class RefundModel {
  refunded = 0;
  deducted = 0;
  balance: number;
  status: "approved" | "pending" | "refunded" | "reversed";
  /** Distinct refunds applied (rows expected in `refunds`). */
  applied = 0;
  /** An approved commission was credited at the sale; a pending one never is before its hold ends. */
  private readonly credited: boolean;
  private readonly keys = new Set<string>();
  private readonly amounts: number[] = [];

  constructor(
    readonly saleCents: number,
    readonly commissionCents: number,
    readonly commissionId: number,
    pending: boolean,
  ) {
    this.status = pending ? "pending" : "approved";
    this.credited = !pending;
    this.balance = pending ? 0 : commissionCents;
  }

  /** The response the endpoint must give to this body. */
  call(body: Record<string, unknown>): Record<string, unknown> {
    const requested = (body.refund_amount_cents as number | null | undefined) ?? null;
    const full = requested === null || requested === 0;
    const refundId = full ? null : ((body.refund_id as string | undefined) ?? null);
    const skipped = (reason: string) => ({
      success: true,
      status: "skipped",
      reason,
      commission_id: this.commissionId,
    });
    if (this.status === "reversed") return skipped("already reversed");
    const key = full ? "full" : refundId !== null ? `id:${refundId}` : `amount:${requested}`;
    // Without refund_id, an amount already applied (with or without id) is taken as a retry.
    if (this.keys.has(key) || (refundId === null && !full && this.amounts.includes(requested as number))) {
      return skipped(
        refundId !== null ? "refund_id already applied" : "duplicate refund (same amount) ignored",
      );
    }
    const left = this.saleCents - this.refunded;
    const before = expectedDeduction(this.commissionCents, this.refunded, this.saleCents);
    this.refunded += full ? left : Math.min(requested as number, left);
    this.keys.add(key);
    this.amounts.push(full ? 0 : (requested as number));
    this.applied++;
    const target = expectedDeduction(this.commissionCents, this.refunded, this.saleCents);
    let deduction: number;
    if (!this.credited) {
      // Pending, or cancelled whole by an earlier refund: nothing was credited, nothing is taken, and the
      // share this refund would take is reported for information.
      deduction = target - before;
      this.deducted = this.commissionCents;
    } else {
      deduction = target - this.deducted;
      this.deducted = target;
      this.balance -= deduction;
    }
    const reversed = this.refunded >= this.saleCents;
    this.status = reversed ? "reversed" : "refunded";
    return {
      success: true,
      status: reversed ? "reversed" : "refunded",
      deductionAmount: deduction,
      commission_id: this.commissionId,
    };
  }
}

const commissionTypes: CommissionType[] = ["percent", "fixed", "recurring_percent", "recurring_fixed"];

const saleCaseArb = fc
  .record({
    saleCents: fc.integer({ min: 1, max: 100_000 }),
    type: fc.constantFrom(...commissionTypes),
    // Percent types: 0.01..100 %; fixed types: 0.01..500.00 in the major unit.
    rateHundredths: fc.integer({ min: 1, max: 10_000 }),
    holdDays: fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 60 })),
  })
  .chain((sale) =>
    fc.record({
      sale: fc.constant(sale),
      steps: fc.array(stepArb(sale.saleCents), { minLength: 1, maxLength: 6 }),
    }),
  );

describe("refund sequences through HTTP (property)", () => {
  it("deduct exactly the rounding rule of the cumulative refund, never twice, balance = ledger", async () => {
    await fc.assert(
      fc.asyncProperty(saleCaseArb, async ({ sale, steps }) => {
        const rate = sale.type.endsWith("fixed")
          ? (sale.rateHundredths * 5) / 100 // up to 500.00
          : sale.rateHundredths / 100;
        const p = await createProgram({
          commissionType: sale.type,
          commissionRate: rate.toFixed(2),
          holdDays: sale.holdDays,
        });
        const s = await trackedSale(p, sale.saleCents);
        expect(s.commissionId).not.toBeNull();
        const commission = await commissionRow(s.commissionId!);
        expect(commission.status).toBe(sale.holdDays > 0 ? "pending" : "approved");
        const model = new RefundModel(
          sale.saleCents,
          commission.amountCents,
          commission.id,
          sale.holdDays > 0,
        );

        for (const body of bodiesOf(s.transactionId, steps)) {
          const response = await refund(p, body);
          expect(response.status, JSON.stringify(body)).toBe(200);
          expect(response.body, JSON.stringify(body)).toEqual(model.call(body));
          // The sale's refunded amount never exceeds its amount.
          const saleNow = await saleRow(s.saleId);
          expect(saleNow.refundedCents).toBe(model.refunded);
          expect(saleNow.refundedCents).toBeLessThanOrEqual(sale.saleCents);
        }

        const after = await commissionRow(s.commissionId!);
        // The documented rule, recomputed from the cumulative refunded amount alone.
        const rule = expectedDeduction(after.amountCents, model.refunded, sale.saleCents);
        if (sale.holdDays === 0) {
          expect(after.deductedCents).toBe(rule);
          expect(await balanceOf(p.programId, p.partnerIds[0])).toBe(after.amountCents - rule);
        } else {
          expect(after.deductedCents).toBe(model.applied > 0 ? after.amountCents : 0);
          expect(await balanceOf(p.programId, p.partnerIds[0])).toBe(0);
        }
        expect(after.deductedCents).toBe(model.deducted);
        expect(await balanceOf(p.programId, p.partnerIds[0])).toBe(model.balance);
        expect(after.status).toBe(model.status);
        // Nothing applied twice: one refunds row per distinct applied refund.
        expect(await refundsOfSale(s.saleId)).toHaveLength(model.applied);
        for (const partnerId of p.partnerIds) await expectBalanceMatchesLedger(p.programId, partnerId);
      }),
      { numRuns: 20 },
    );
  }, 120_000);
});

describe("decideRefund (pure property)", () => {
  const factsArb = fc.record({
    saleCents: fc.integer({ min: 1, max: 10_000_000 }),
    commissionCents: fc.integer({ min: 0, max: 5_000_000 }),
    pending: fc.boolean(),
    paidOut: fc.boolean(),
  });
  const intentArb = fc.record({
    amountCents: fc.option(
      fc.oneof(fc.integer({ min: 0, max: 10_000_000 }), fc.integer({ min: 1, max: 50 })),
      {
        nil: null,
        freq: 8,
      },
    ),
    refundId: fc.option(fc.string({ minLength: 1, maxLength: 3 }), { nil: null }),
    reason: fc.constantFrom("refund" as const, "chargeback" as const),
    refundReason: fc.option(fc.string({ maxLength: 5 }), { nil: null }),
  });

  it("deductions sum to the final target, are never negative, never exceed the commission", () => {
    fc.assert(
      fc.property(factsArb, fc.array(intentArb, { minLength: 1, maxLength: 12 }), (start, intents) => {
        const facts: RefundFacts = {
          sale: {
            id: 1,
            amountCents: start.saleCents,
            refundedCents: 0,
            currency: "USD",
            awaitingCommission: false,
          },
          commission: {
            id: 9,
            amountCents: start.commissionCents,
            deductedCents: 0,
            status: start.pending ? "pending" : "approved",
            credited: !start.pending,
            paidOut: start.paidOut && !start.pending,
            version: 0,
            isTest: false,
          },
          appliedRefunds: [],
        };
        let sumDeduction = 0;
        let sumBalance = 0;
        let anyApplied = false;
        for (const intent of intents as RefundIntent[]) {
          const decision = decideRefund(facts, intent);
          if (decision.outcome !== "applied") {
            expect(decision.outcome).toBe("skipped");
            continue;
          }
          const w = decision.write;
          const c = w.commission!;
          expect(decision.deductionCents).toBeGreaterThanOrEqual(0);
          expect(c.balanceDeductionCents).toBeGreaterThanOrEqual(0);
          expect(c.newDeductedCents).toBeLessThanOrEqual(start.commissionCents);
          expect(c.newDeductedCents).toBeGreaterThanOrEqual(facts.commission!.deductedCents);
          expect(w.newRefundedCents).toBeLessThanOrEqual(start.saleCents);
          expect(w.appliedCents).toBeGreaterThan(0);
          expect(c.flagForReview).toBe(facts.commission!.paidOut);
          sumDeduction += decision.deductionCents;
          sumBalance += c.balanceDeductionCents;
          anyApplied = true;
          // Apply the write to the facts, as the database would.
          facts.sale.refundedCents = w.newRefundedCents;
          facts.commission = {
            ...facts.commission!,
            deductedCents: c.newDeductedCents,
            status: c.status,
            version: facts.commission!.version + 1,
          };
          facts.appliedRefunds = [
            ...facts.appliedRefunds,
            { idempotencyKey: w.idempotencyKey, amountCents: intent.amountCents ?? 0 },
          ];
        }
        const finalTarget = expectedDeduction(
          start.commissionCents,
          facts.sale.refundedCents,
          start.saleCents,
        );
        if (start.pending) {
          // Nothing credited, nothing taken; the informational shares add up as a credited commission's do.
          expect(sumBalance).toBe(0);
          expect(sumDeduction).toBe(finalTarget);
          expect(facts.commission!.deductedCents).toBe(anyApplied ? start.commissionCents : 0);
        } else {
          expect(sumDeduction).toBe(finalTarget);
          expect(sumBalance).toBe(finalTarget);
          expect(facts.commission!.deductedCents).toBe(finalTarget);
        }
        expect(sumDeduction).toBeLessThanOrEqual(start.commissionCents);
      }),
      { numRuns: 3000 },
    );
  });

  it("an applied refund_id or amount is never applied again", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 2, max: 100_000 }),
        fc.array(
          fc.record({ amount: fc.integer({ min: 1, max: 500 }), id: fc.option(fc.string(), { nil: null }) }),
          {
            minLength: 1,
            maxLength: 8,
          },
        ),
        (saleCents, calls) => {
          const facts: RefundFacts = {
            sale: {
              id: 1,
              amountCents: saleCents,
              refundedCents: 0,
              currency: "USD",
              awaitingCommission: false,
            },
            commission: {
              id: 9,
              amountCents: 1000,
              deductedCents: 0,
              status: "approved",
              credited: true,
              paidOut: false,
              version: 0,
              isTest: false,
            },
            appliedRefunds: [],
          };
          for (const call of calls) {
            const intent: RefundIntent = {
              amountCents: call.amount,
              refundId: call.id,
              reason: "refund",
              refundReason: null,
            };
            const first = decideRefund(facts, intent);
            if (first.outcome !== "applied") continue;
            facts.sale.refundedCents = first.write.newRefundedCents;
            facts.commission = {
              ...facts.commission!,
              deductedCents: first.write.commission!.newDeductedCents,
              status: first.write.commission!.status,
            };
            facts.appliedRefunds = [
              ...facts.appliedRefunds,
              { idempotencyKey: first.write.idempotencyKey, amountCents: call.amount },
            ];
            expect(decideRefund(facts, intent).outcome).toBe("skipped");
          }
        },
      ),
      { numRuns: 2000 },
    );
  });
});
