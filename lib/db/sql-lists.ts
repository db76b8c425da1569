import { type SQL, sql } from "drizzle-orm";

/** `(a, b, ...)` of text parameters for `in`; a list that matches nothing when `values` is empty. */
export function textList(values: readonly string[]): SQL {
  if (values.length === 0) return sql`(null::text)`;
  return sql`(${sql.join(
    values.map((value) => sql`${value}::text`),
    sql`, `,
  )})`;
}
