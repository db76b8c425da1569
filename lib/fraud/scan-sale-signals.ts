import { sql } from "drizzle-orm";
import { commissions } from "../../schema/commissions.ts";
import { customers } from "../../schema/customers.ts";
import { leadEvents, saleEvents } from "../../schema/events.ts";
import type { Database } from "../db/client.ts";
import { columnName } from "../db/columns.ts";
import { flagUnion } from "./flag-union.ts";
import { fraudScanBatch, fraudThresholds as t } from "./fraud-codes.ts";

/**
 * Scans the sales not scanned yet (oldest first, at most `limit`) whose customer's leads are all scanned (their
 * signals must be known first; the lead scan runs before, in the same job), and
 * stores their signals on the sale and on its commission, in ONE statement (claimed `for update skip locked`:
 * concurrent runs take different sales; a sale once marked is never taken again). A sale gets its customer's
 * lead signals, plus its own:
 * - `fast_conversion`: the sale came less than `fastSaleSeconds` after the customer's click;
 * - `lead_steering`: a payment from the provider settled a customer that no lead confirmed by the brand's
 *   server ever did: every lead of the customer is provisional (keyless under `server_required`), and one of
 *   them carried the email the customer now holds. That is the steering attack: a keyless lead with someone
 *   else's email, which a later payment by that buyer, found by email, pays out.
 * Returns how many sales were scanned.
 */
export async function scanSaleSignals(db: Database, now: Date, limit = fraudScanBatch): Promise<number> {
  const at = now.toISOString();
  const s = saleEvents;
  const l = leadEvents;
  const cu = customers;
  const c = commissions;
  const result = await db.execute<{ scanned: number }>(sql`
    with claimed as (
      select ${s.id} as id from ${s}
      where ${s.fraudScannedAt} is null
        and not exists (
          select 1 from ${l} where ${l.customerId} = ${s.customerId} and ${l.fraudScannedAt} is null)
      order by ${s.id}
      limit ${limit}
      for update skip locked
    ),
    found as (
      select ${s.id} as id,
        coalesce((
          select array_agg(distinct flag) from ${l}, unnest(${l.fraudFlags}) as flag
          where ${l.customerId} = ${s.customerId} and ${l.isTest} = ${s.isTest}
        ), '{}'::text[])
        || array_remove(array[
          case when ${cu.clickedAt} is not null
                and ${s.createdAt} < ${cu.clickedAt} + make_interval(secs => ${t.fastSaleSeconds})
               then 'fast_conversion' end,
          case when ${s.source} = 'stripe' and ${cu.id} is not null
                and exists (
                  select 1 from ${l}
                  where ${l.customerId} = ${cu.id} and ${l.provisional} and ${l.isTest} = ${s.isTest}
                    and ${l.emailHash} = ${cu.emailHash})
                and not exists (
                  select 1 from ${l}
                  where ${l.customerId} = ${cu.id} and not ${l.provisional} and ${l.isTest} = ${s.isTest})
               then 'lead_steering' end
        ]::text[], null) as flags
      from claimed
      join ${s} on ${s.id} = claimed.id
      left join ${cu} on ${cu.id} = ${s.customerId} and ${cu.isTest} = ${s.isTest}
    ),
    marked as (
      update ${s}
      set ${columnName(s.fraudFlags)} = ${flagUnion(s.fraudFlags, sql`found.flags`)},
          ${columnName(s.fraudScannedAt)} = ${at}::timestamptz
      from found
      where ${s.id} = found.id
      returning ${s.id} as id, ${s.fraudFlags} as flags
    ),
    commission_flags as (
      update ${c}
      set ${columnName(c.fraudFlags)} = ${flagUnion(c.fraudFlags, sql`marked.flags`)}
      from marked
      where ${c.saleId} = marked.id and cardinality(marked.flags) > 0
      returning 1
    )
    select (select count(*)::int from marked) as scanned, (select count(*) from commission_flags) as commissions`);
  return Number(result.rows[0]?.scanned ?? 0);
}
