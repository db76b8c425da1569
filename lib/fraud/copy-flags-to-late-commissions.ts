import { sql } from "drizzle-orm";
import { commissions } from "../../schema/commissions.ts";
import { saleEvents } from "../../schema/events.ts";
import type { Database } from "../db/client.ts";
import { columnName } from "../db/columns.ts";

/**
 * A commission written after its sale was scanned (the scheduled repair of a sale whose commission failed)
 * gets the sale's flags here. Only the last day's commissions are looked at: the repair runs within minutes.
 * (The hold rule reads the sale's flags, so it never depends on this copy.) Returns how many were updated.
 */
export async function copyFlagsToLateCommissions(db: Database, now: Date): Promise<number> {
  const c = commissions;
  const s = saleEvents;
  const result = await db.execute<{ copied: number }>(sql`
    with copied as (
      update ${c}
      set ${columnName(c.fraudFlags)} = fraud_flag_union(${c.fraudFlags}, ${s.fraudFlags})
      from ${s}
      where ${s.id} = ${c.saleId}
        and ${c.createdAt} > ${now.toISOString()}::timestamptz - interval '1 day'
        and cardinality(${s.fraudFlags}) > 0
        and not (${c.fraudFlags} @> ${s.fraudFlags})
      returning 1)
    select count(*)::int as copied from copied`);
  return Number(result.rows[0]?.copied ?? 0);
}
