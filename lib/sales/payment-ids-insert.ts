import { type SQL, sql } from "drizzle-orm";
import { paymentAliases } from "../../schema/payment-aliases.ts";
import { columnName } from "../db/columns.ts";
import type { PaymentNamespace } from "./payment-namespace.ts";

/** One row of the ids index: `alias` is one of the ids payment `paymentId` is known by. */
export interface PaymentIdRow {
  programId: number;
  namespace: PaymentNamespace;
  alias: string;
  paymentId: string;
  /** null: not linked to a sale (yet). */
  saleId: number | null;
}

/**
 * `insert into payment_aliases (...) values (...), ...` of the ids index, written once for the sale's
 * transaction and the provider's aliases; each caller adds its own `on conflict` (rows must not be empty).
 */
export function paymentIdsInsert(rows: readonly PaymentIdRow[]): SQL {
  const t = paymentAliases;
  return sql`
    insert into ${t} (${columnName(t.programId)}, ${columnName(t.namespace)}, ${columnName(t.alias)},
                      ${columnName(t.paymentId)}, ${columnName(t.saleId)})
    values ${sql.join(
      rows.map(
        (r) =>
          sql`(${r.programId}::int, ${r.namespace}::text, ${r.alias}::text, ${r.paymentId}::text, ${r.saleId}::bigint)`,
      ),
      sql`, `,
    )}`;
}
