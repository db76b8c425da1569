import type { CommissionStatus } from "../../schema/commissions.ts";
import { divideRoundHalfUp } from "../money.ts";

/** The sale being refunded, its commission and the refunds already applied (one read round trip). */
export interface RefundFacts {
  sale: {
    id: number;
    amountCents: number;
    refundedCents: number;
    currency: string;
    /** Stored without its commission, which the scheduled repair is still to create. */
    awaitingCommission: boolean;
  };
  commission: {
    id: number;
    amountCents: number;
    deductedCents: number;
    status: CommissionStatus;
    credited: boolean;
    paidOut: boolean;
    version: number;
    isTest: boolean;
  } | null;
  /**
   * Refunds already applied to the sale that this call could repeat (`repeatOf`): the refund endpoint reads
   * only those, the provider's reversals every one.
   */
  appliedRefunds: ReadonlyArray<{ idempotencyKey: string; amountCents: number }>;
}

export interface RefundIntent {
  /** This refund's amount; null (omitted) or 0 refunds everything left. */
  amountCents: number | null;
  refundId: string | null;
  reason: "refund" | "chargeback";
  refundReason: string | null;
}

export type RefundDecision =
  | { outcome: "skipped"; reason: string; commissionId: number | null }
  /**
   * The sale's commission is still being repaired (the sale endpoint answered "Failed to create
   * commission"): nothing can be applied until it exists. Nothing is written; the caller retries later.
   */
  | { outcome: "awaiting_commission" }
  | { outcome: "no_commission"; write: RefundWrite }
  | {
      outcome: "applied";
      status: "refunded" | "reversed";
      /**
       * Minor units of the commission's currency: this refund's share of the commission (`deductionAmount`),
       * taken from the balance only when the commission was credited (`balanceDeductionCents`).
       */
      deductionCents: number;
      commissionId: number;
      write: RefundWrite;
    };

/** What the write batch applies, all guarded on the state read. */
export interface RefundWrite {
  saleId: number;
  expectedRefundedCents: number;
  newRefundedCents: number;
  appliedCents: number;
  idempotencyKey: string;
  refundId: string | null;
  reason: "refund" | "chargeback";
  /** `refund_reason`, or the reason code when it is absent or empty. */
  recordedReason: string;
  commission: {
    id: number;
    expectedVersion: number;
    status: "refunded" | "reversed";
    newDeductedCents: number;
    /** Taken from the partner balance in the same transaction (0 unless the commission was credited). */
    balanceDeductionCents: number;
    /** A paid-out commission is flagged for the advertiser's manual review. */
    flagForReview: boolean;
  } | null;
}

/**
 * Refunds without a `refund_id` are keyed by their amount: the same amount twice for one sale is a retry.
 * A full refund (amount omitted or 0) is keyed as such; it can apply only once anyway.
 */
export function idempotencyKeyFor(intent: RefundIntent): string {
  if (intent.amountCents === null || intent.amountCents === 0) return "full";
  return intent.refundId !== null ? `id:${intent.refundId}` : `amount:${intent.amountCents}`;
}

/**
 * What an applied refund of the sale holds when a call repeats it: the same idempotency key, or, for a partial
 * refund without a `refund_id`, the same amount (`amountCents`, null when the amount does not count).
 */
export interface RefundRepeat {
  idempotencyKey: string;
  amountCents: number | null;
}

/**
 * This call's `RefundRepeat`. The refund endpoint reads only the applied refunds that match it, so its read
 * does not grow with the sale's refunds.
 */
export function repeatOf(intent: RefundIntent): RefundRepeat {
  const idempotencyKey = idempotencyKeyFor(intent);
  const full = intent.amountCents === null || intent.amountCents === 0;
  return { idempotencyKey, amountCents: intent.refundId === null && !full ? intent.amountCents : null };
}

/**
 * The commission state table (spec section 3). The cumulative refunded amount, capped at the sale amount,
 * decides the target: the commission's total reduction is always `round_half_up(commission * refunded /
 * sale)` (all of it once fully refunded), and each call deducts the difference from what was already
 * deducted, so partial refunds never drift by rounding.
 *
 * The common refund's table also runs in the database (`record_refund_at_once`, `refund-at-once.ts`): a change
 * here goes there too, or makes it leave the case to this function (`refund-at-once.test.ts` compares them).
 */
export function decideRefund(facts: RefundFacts, intent: RefundIntent): RefundDecision {
  const { sale, commission } = facts;
  const repeat = repeatOf(intent);
  const commissionId = commission?.id ?? null;
  const full = intent.amountCents === null || intent.amountCents === 0;

  if (commission?.status === "reversed")
    return { outcome: "skipped", reason: "already reversed", commissionId };
  if (sale.awaitingCommission) return { outcome: "awaiting_commission" };
  const repeated = facts.appliedRefunds.some(
    (applied) =>
      applied.idempotencyKey === repeat.idempotencyKey ||
      (repeat.amountCents !== null && applied.amountCents === repeat.amountCents),
  );
  if (repeated) {
    return {
      outcome: "skipped",
      reason:
        intent.refundId !== null && !full
          ? "refund_id already applied"
          : "duplicate refund (same amount) ignored",
      commissionId,
    };
  }
  const remaining = sale.amountCents - sale.refundedCents;
  const appliedCents = full ? remaining : Math.min(intent.amountCents as number, remaining);
  const newRefundedCents = sale.refundedCents + appliedCents;
  const base: RefundWrite = {
    saleId: sale.id,
    expectedRefundedCents: sale.refundedCents,
    newRefundedCents,
    appliedCents,
    idempotencyKey: repeat.idempotencyKey,
    refundId: full ? null : intent.refundId,
    reason: intent.reason,
    recordedReason: intent.refundReason?.trim() || intent.reason,
    commission: null,
  };
  if (!commission || commission.isTest) {
    if (appliedCents === 0)
      return { outcome: "skipped", reason: "sale already fully refunded", commissionId };
    return { outcome: "no_commission", write: base };
  }

  const fullyRefunded = newRefundedCents >= sale.amountCents;
  /** The commission's total reduction once `refundedCents` of the sale is refunded. */
  const reductionAt = (refundedCents: number) =>
    refundedCents >= sale.amountCents
      ? commission.amountCents
      : Number(
          divideRoundHalfUp(BigInt(commission.amountCents) * BigInt(refundedCents), BigInt(sale.amountCents)),
        );
  const target = reductionAt(newRefundedCents);
  // A pending commission is cancelled whole on any refund: nothing was credited, so nothing is taken.
  const newDeductedCents =
    commission.status === "pending" ? commission.amountCents : Math.max(target, commission.deductedCents);
  const status = fullyRefunded ? "reversed" : "refunded";
  // Never credited (pending, or cancelled whole by a refund while pending): `deductionAmount` reports, for
  // information, this refund's share of the commission, so the shares of a sale's refunds add up to the
  // commission's reduction as they do for a credited one; nothing is taken from the balance.
  const deductionCents = commission.credited
    ? newDeductedCents - commission.deductedCents
    : Math.max(0, target - reductionAt(sale.refundedCents));
  return {
    outcome: "applied",
    status,
    deductionCents,
    commissionId: commission.id,
    write: {
      ...base,
      commission: {
        id: commission.id,
        expectedVersion: commission.version,
        status,
        newDeductedCents,
        balanceDeductionCents: commission.credited ? newDeductedCents - commission.deductedCents : 0,
        flagForReview: commission.paidOut,
      },
    },
  };
}
