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
 * The unique index of a sale's id within its namespace: two sales of one id meet here (the sale's insert writes
 * the id into the ids index after its row, migration 0049). Two sales sharing a provider's alias meet at the ids
 * index, claimed first; a sale whose own id is another's alias meets it at its own insert of the id. Either way
 * the later one's guard or this index fails it, and the attempt is re-run and its read answers.
 */
export const saleIdConstraint = saleIdUniqueIndex;
