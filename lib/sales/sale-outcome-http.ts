import { keyRefusalError, saleKeyMessages } from "../auth/program-key.ts";
import { type ApiError, platformError } from "../errors/api-error.ts";
import type { SaleRefusal } from "../tracking/sale/decide-sale.ts";
import { occurredAtMessage, saleRequiredMessages } from "../tracking/sale/sale-messages.ts";
import type { recordSale } from "./record-sale.ts";

/** The spec's words for each sale refusal (section 7); the provider's events log the same words. */
export function saleRefusalMessage(refusal: Exclude<SaleRefusal, { reason: "key" }>): string {
  switch (refusal.reason) {
    case "occurred_at_out_of_range":
      return occurredAtMessage;
    case "unsupported_currency":
      return `currency ${refusal.currency} is not supported`;
    case "transaction_id_required":
      return saleRequiredMessages.transactionId;
    case "amount_required":
      return saleRequiredMessages.amount;
    case "duplicate_transaction":
      return "Duplicate transaction_id. This sale has already been recorded.";
    case "customer_not_found":
      return "Customer not found. Provide customer_key or click_id.";
    case "customer_in_other_program":
      return "No affiliate attribution found for this customer in this program";
    case "no_partner_relationship":
      return "No partner-program relationship found for this customer";
    case "no_partner":
      return "partnerId required to create commission";
  }
}

/** A sale refusal as the sale endpoint answers it: status, platform envelope, stable `error.code`. */
export function saleRefusalError(refusal: SaleRefusal, docsUrl: string): ApiError {
  if (refusal.reason === "key") return keyRefusalError(refusal.refusal, saleKeyMessages, docsUrl);
  const message = saleRefusalMessage(refusal);
  switch (refusal.reason) {
    case "occurred_at_out_of_range":
    case "transaction_id_required":
    case "amount_required":
      return platformError(400, message, { code: "invalid_request" });
    case "unsupported_currency":
      return platformError(422, message, { code: "unsupported_currency" });
    case "duplicate_transaction":
      return platformError(409, message, {
        code: "duplicate_transaction",
        details: { sale_id: refusal.saleId },
      });
    case "customer_not_found":
    case "customer_in_other_program":
    case "no_partner_relationship":
    case "no_partner":
      return platformError(400, message, { code: "no_attribution" });
  }
}

type SaleOutcome = Awaited<ReturnType<typeof recordSale>>;

/**
 * The sale endpoint's one mapping of the use case's result: the 200 bodies of spec section 4, or the error
 * it answers (thrown, rendered by `onError` with the route's policy). A sale stored without its commission
 * answers 500 `Failed to create commission` (a retry gives 409).
 */
export function saleResponseBody(outcome: SaleOutcome, docsUrl: string) {
  const { decision, written } = outcome;
  if (decision.outcome === "refused") throw saleRefusalError(decision.refusal, docsUrl);
  if (decision.outcome === "not_attributed") {
    return { success: true as const, sale_id: null, commission_id: null, message: decision.message };
  }
  if (!written) throw new Error("recorded sale without ids");
  if (written.commissionFailed) throw platformError(500, "Failed to create commission");
  if (decision.refuseAfterWrite) throw saleRefusalError(decision.refuseAfterWrite, docsUrl);
  if (decision.test) {
    return {
      success: true as const,
      message: decision.message,
      data: { eventId: written.saleId, programId: decision.programId, test_mode: true as const },
    };
  }
  return {
    success: true as const,
    sale_id: written.saleId,
    commission_id: written.commissionId,
    message: decision.message,
  };
}
