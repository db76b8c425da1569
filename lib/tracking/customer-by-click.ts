import { type Placeholder, type SQL, sql } from "drizzle-orm";
import { customers } from "../../schema/customers.ts";

/**
 * The id of the customer of a click, as a subquery: what a lead's or a sale's event row names when the same
 * batch creates that customer (its id is not known before the batch runs).
 */
export function customerByClick(programId: number | Placeholder, clickId: string | Placeholder): SQL {
  const t = customers;
  return sql`(select ${t.id} from ${t} where ${t.programId} = ${programId}::int and ${t.clickId} = ${clickId}::text)`;
}
