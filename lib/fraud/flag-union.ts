import { type AnyColumn, type SQL, sql } from "drizzle-orm";

/**
 * A flags column joined with more flags: distinct and sorted, so running a scan again, or two at once, always
 * stores the same array (adding a flag twice changes nothing).
 */
export function flagUnion(column: AnyColumn | SQL, more: AnyColumn | SQL): SQL {
  return sql`array(select distinct f from unnest(${column} || ${more}) as f order by f)`;
}
