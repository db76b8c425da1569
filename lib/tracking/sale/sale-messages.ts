/**
 * Messages of the sale rules that `decideSale` enforces outside the schema. Their own module so the
 * decision (shared with the payments provider's events worker) does not pull the request schema, and with
 * it the OpenAPI extension of zod, into that worker's bundle.
 */
export const requiredTransactionId = "transaction_id is required and must be a string";
export const requiredAmount = "amount_cents is required and must be a positive integer";
export const occurredAtMessage = "occurred_at must be an ISO 8601 time within the last 30 days";

export const saleRequiredMessages = { transactionId: requiredTransactionId, amount: requiredAmount };
