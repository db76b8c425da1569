import { sql } from "drizzle-orm";
import { alias } from "drizzle-orm/pg-core";
import { clickEvents, leadEvents } from "../../schema/events.ts";
import { emailDomains } from "../../schema/fraud.ts";
import { partners } from "../../schema/partners.ts";
import type { Database } from "../db/client.ts";
import { columnName } from "../db/columns.ts";
import { flagUnion } from "./flag-union.ts";
import { fraudScanBatch, fraudThresholds as t } from "./fraud-codes.ts";

/**
 * Scans the leads not scanned yet (oldest first, at most `limit`) and stores their signals, in ONE statement:
 * the leads are claimed with `for update skip locked`, so two runs at the same time take different leads, and
 * a lead once marked `fraud_scanned_at` is never taken again (running twice changes nothing). The signals read
 * only rows written before the lead (its click, the earlier leads of its address), so a later row never
 * changes an earlier verdict. Returns how many leads were scanned.
 *
 * - `self_referral`: the email is the partner's own (same hash of the normalised address), or shares the
 *   partner's domain when that domain is private (not a public or disposable mail provider).
 * - `disposable_email`: the domain (or its parent, for lists that cover every subdomain) is disposable.
 * - `fast_conversion`: the lead came less than `fastLeadSeconds` after its click.
 * - `ip_velocity`: with this lead, `velocityCustomers` or more distinct customers' leads came from its address
 *   in the program within `velocityWindowSeconds`.
 * - `partner_device`: the address already sent, within `partnerDeviceWindowDays`, a lead of ANOTHER customer
 *   of the same partner in the program: one device converting for several customers of one partner is the
 *   partner's own device (a real customer converts once).
 * Test and live leads are compared only with their own kind.
 */
export async function scanLeadSignals(db: Database, now: Date, limit = fraudScanBatch): Promise<number> {
  const at = now.toISOString();
  const l = leadEvents;
  const o = alias(leadEvents, "o");
  const k = clickEvents;
  const pa = partners;
  const d = emailDomains;
  const domainOf = sql`split_part(${l.emailMasked}, '@', 2)`;
  // The customer a lead speaks for: its email when it has one, else its click.
  const customerOf = (lead: typeof l | typeof o) => sql`coalesce(${lead.emailHash}, ${lead.clickId})`;
  const result = await db.execute<{ scanned: number }>(sql`
    with claimed as (
      select ${l.id} as id from ${l}
      where ${l.fraudScannedAt} is null
      order by ${l.id}
      limit ${limit}
      for update skip locked
    ),
    found as (
      select ${l.id} as id, array_remove(array[
        case when ${l.emailHash} is not null and (
               ${l.emailHash} = encode(sha256(convert_to(lower(trim(${pa.email})), 'UTF8')), 'hex')
               or (${domainOf} = split_part(lower(trim(${pa.email})), '@', 2)
                   and not exists (select 1 from ${d} where ${d.domain} = ${domainOf} and (${d.free} or ${d.disposable}))))
             then 'self_referral' end,
        case when ${l.emailMasked} is not null and exists (
               select 1 from ${d}
               where (${d.domain} = ${domainOf} and ${d.disposable})
                  or (${d.domain} = substring(${domainOf} from position('.' in ${domainOf}) + 1)
                      and ${d.disposableSubdomains}))
             then 'disposable_email' end,
        case when ${k.createdAt} is not null
              and ${l.createdAt} < ${k.createdAt} + make_interval(secs => ${t.fastLeadSeconds})
             then 'fast_conversion' end,
        case when ${l.ipHash} is not null and (
               select count(distinct ${customerOf(o)}) from ${leadEvents} ${o}
               where ${o.programId} = ${l.programId} and ${o.ipHash} = ${l.ipHash} and ${o.isTest} = ${l.isTest}
                 and ${o.createdAt} > ${l.createdAt} - make_interval(secs => ${t.velocityWindowSeconds})
                 and ${o.createdAt} <= ${l.createdAt}) >= ${t.velocityCustomers}
             then 'ip_velocity' end,
        case when ${l.ipHash} is not null and ${l.partnerId} is not null and exists (
               select 1 from ${leadEvents} ${o}
               where ${o.programId} = ${l.programId} and ${o.ipHash} = ${l.ipHash} and ${o.isTest} = ${l.isTest}
                 and ${o.partnerId} = ${l.partnerId} and ${o.id} <> ${l.id}
                 and ${o.createdAt} > ${l.createdAt} - make_interval(days => ${t.partnerDeviceWindowDays})
                 and ${o.createdAt} <= ${l.createdAt}
                 and ${customerOf(o)} is distinct from ${customerOf(l)})
             then 'partner_device' end
      ]::text[], null) as flags
      from claimed
      join ${l} on ${l.id} = claimed.id
      left join ${pa} on ${pa.id} = ${l.partnerId}
      left join ${k} on ${k.clickId} = ${l.clickId} and ${k.isTest} = ${l.isTest}
    ),
    marked as (
      update ${l}
      set ${columnName(l.fraudFlags)} = ${flagUnion(l.fraudFlags, sql`found.flags`)},
          ${columnName(l.fraudScannedAt)} = ${at}::timestamptz
      from found
      where ${l.id} = found.id
      returning 1
    )
    select count(*)::int as scanned from marked`);
  return Number(result.rows[0]?.scanned ?? 0);
}
