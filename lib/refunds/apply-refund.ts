import { refundIdempotencyUniqueIndex } from "../../schema/commissions.ts";
import type { Database } from "../db/client.ts";
import type { Sending } from "../db/group-committed-statement.ts";
import { decideRefund, type RefundFacts, type RefundIntent } from "./decide-refund.ts";
import { refundNotifications } from "./refund-notifications.ts";
import { writeRefund } from "./refund-store.ts";

/** Who a commission transition is reported to (read with the sale). */
export interface RefundParties {
  programId: number;
  partnerId: number | null;
  advertiserId: number;
}

export type RefundOutcome =
  | { status: "skipped"; reason: string; commissionId: number | null }
  /** Nothing applied: the sale's commission is still being repaired (see `decideRefund`). */
  | { status: "awaiting_commission" }
  | { status: "no_commission" }
  | { status: "refunded" | "reversed"; deductionCents: number; commissionId: number };

/**
 * The reversal logic shared by the refund endpoint and the payments provider's refund and dispute events:
 * the commission state table (`decideRefund`), then one guarded write transaction (`writeRefund`) that also
 * writes the transition's notifications. Run it inside `withConflictRetry` on `refundConflictConstraint`:
 * a concurrent refund of the same sale makes the write abort, and the caller re-reads and re-decides.
 */
export async function applyRefund(
  db: Database,
  facts: RefundFacts,
  parties: RefundParties,
  intent: RefundIntent,
  now: Date,
  /** How the write goes to the database (the isolate's group commit); unset: alone. */
  sending?: Sending,
): Promise<RefundOutcome> {
  const decision = decideRefund(facts, intent);
  if (decision.outcome === "skipped") {
    return { status: "skipped", reason: decision.reason, commissionId: decision.commissionId };
  }
  if (decision.outcome === "awaiting_commission") return { status: "awaiting_commission" };
  const commission = facts.commission;
  const notifications =
    decision.outcome !== "no_commission" && parties.partnerId !== null && commission
      ? refundNotifications({
          programId: parties.programId,
          partnerId: parties.partnerId,
          advertiserId: parties.advertiserId,
          commissionId: decision.commissionId,
          status: decision.status,
          deductionCents: decision.deductionCents,
          currency: facts.sale.currency,
          reason: decision.write.recordedReason,
          paidOut: commission.paidOut,
        })
      : [];
  const lockOrder = parties.partnerId ?? 0;
  await writeRefund(db, decision.write, intent.amountCents || null, notifications, now, lockOrder, sending);
  if (decision.outcome === "no_commission") return { status: "no_commission" };
  return {
    status: decision.status,
    deductionCents: decision.deductionCents,
    commissionId: decision.commissionId,
  };
}

/** The unique constraint two concurrent identical refunds meet (the loser re-reads and is skipped). */
export const refundConflictConstraint = refundIdempotencyUniqueIndex;
