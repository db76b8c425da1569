import type { Database } from "../db/client.ts";
import { withConflictRetry } from "../db/errors.ts";
import type { Sending } from "../db/group-committed-statement.ts";
import {
  applyRefund,
  type RefundOutcome,
  type RefundParties,
  refundConflictConstraint,
} from "./apply-refund.ts";
import type { RefundFacts, RefundIntent } from "./decide-refund.ts";

/** What one attempt's read found: a sale to refund with this intent, or an answer without a refund. */
export type RefundPlan<Answer> =
  | { refund: { facts: RefundFacts; parties: RefundParties; intent: RefundIntent } }
  | { answer: Answer };

/**
 * The refund use case shared by the refund endpoint and the provider's refund, dispute and duplicate
 * events: each attempt finds the sale (`find`: read, check, decide the intent), then the reversal logic
 * (`applyRefund`: state table, one guarded transaction, notifications). A concurrent refund of the same
 * sale makes the write abort and the whole attempt is re-run on the state it committed. A sale whose
 * commission is still being repaired is answered from the first read (`awaiting_commission`), never retried.
 */
export async function refundSale<Answer>(
  db: Database,
  now: Date,
  find: () => Promise<RefundPlan<Answer>>,
  options: {
    attempts?: number;
    /** How the write goes to the database (the isolate's group commit); unset: alone. */
    sending?: Sending;
  } = {},
): Promise<{ answer: Answer } | { outcome: RefundOutcome }> {
  const { sending, ...retry } = options;
  return withConflictRetry(
    async () => {
      const plan = await find();
      if ("answer" in plan) return { answer: plan.answer };
      const { facts, parties, intent } = plan.refund;
      return { outcome: await applyRefund(db, facts, parties, intent, now, sending) };
    },
    { retryOnConstraints: [refundConflictConstraint], ...retry },
  );
}
