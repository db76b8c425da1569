import { saleIdUniqueIndex } from "../../schema/events.ts";

/**
 * The id namespace of a payment's ids (`payment_aliases.namespace`, `affiliate_sale_events.id_namespace`):
 * one for every live sale of the service, and one per program for its test sales. Spec section 1: a test
 * record does not affect live state, so a test sale never uses up a live `transaction_id` (nor another
 * program's test id).
 */
export type PaymentNamespace = "live" | `test:${number}`;

export const liveNamespace: PaymentNamespace = "live";

export function paymentNamespace(isTest: boolean, programId: number): PaymentNamespace {
  return isTest ? `test:${programId}` : liveNamespace;
}

/**
 * The unique index of a sale's id within its namespace. The ids index (`payment_aliases`) is written first in
 * the sale's transaction, so two writers of one id usually meet there (a guard failure); they meet here only
 * when an alias kept unlinked already held the id. Either way the attempt is re-run and its read answers.
 */
export const saleIdConstraint = saleIdUniqueIndex;
