import type { z } from "zod";
import { type ApiError, platformError } from "../errors/api-error.ts";
import type { Logger } from "../log.ts";
import type { RefundOutcome } from "./apply-refund.ts";
import type { RefundResponseSchema } from "./refund-request.ts";

export type RefundBody = z.infer<typeof RefundResponseSchema>;

/** The refund endpoint's 404: no sale under that id in the key's program (spec section 7). */
export function saleNotFoundError(): ApiError {
  return platformError(404, "Sale not found for transaction_id");
}

/**
 * The refund endpoint's one mapping of the use case's outcome to its 200 bodies (spec section 4), or the
 * error it answers. A sale whose commission awaits repair (the sale endpoint answered "Failed to create
 * commission" and the scheduled repair has not created it yet) had nothing applied: the spec's retryable 500,
 * to retry with the same `refund_id`.
 */
export function refundResponseBody(outcome: RefundOutcome, log: Logger): RefundBody {
  switch (outcome.status) {
    case "awaiting_commission":
      log.warn("refund refused: commission awaiting repair", { error_code: "awaiting_commission" });
      throw platformError(500, "Refund tracking failed");
    case "skipped":
      return {
        success: true,
        status: "skipped",
        reason: outcome.reason,
        commission_id: outcome.commissionId,
      };
    case "no_commission":
      return {
        success: true,
        status: "no_commission",
        message: "Refund recorded; this sale has no commission.",
      };
    default:
      return {
        success: true,
        status: outcome.status,
        deductionAmount: outcome.deductionCents,
        commission_id: outcome.commissionId,
      };
  }
}
