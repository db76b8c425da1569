import { type SQL, sql } from "drizzle-orm";
import { alias } from "drizzle-orm/pg-core";
import type { AnalyticsDimension } from "../../schema/analytics.ts";
import { commissions, refunds } from "../../schema/commissions.ts";
import { customers } from "../../schema/customers.ts";
import { clickEvents, leadEvents, saleEvents } from "../../schema/events.ts";

/** The measures every fact row and rollup row carries, in this order. */
export const measureColumns = [
  "clicks",
  "leads",
  "provisional_leads",
  "sales",
  "revenue_cents",
  "refunds",
  "refunded_cents",
  "commission_cents",
] as const;
export type Measure = (typeof measureColumns)[number];

/** Half-open time ranges [from, to). */
export type TimeRange = readonly [Date, Date];

function within(column: SQL, ranges: readonly TimeRange[]): SQL {
  if (ranges.length === 0) return sql`false`;
  return sql`(${sql.join(
    ranges.map(
      ([from, to]) =>
        sql`(${column} >= ${from.toISOString()}::timestamptz and ${column} < ${to.toISOString()}::timestamptz)`,
    ),
    sql` or `,
  )})`;
}

/** The dimension value of a fact row `f` ('' when it has none: the "(direct)" row). */
export function dimensionValue(dimension: AnalyticsDimension): SQL {
  switch (dimension) {
    case "partner":
      return sql`coalesce(f.partner_id::text, '')`;
    case "link":
      return sql`coalesce(f.link_id::text, '')`;
    case "referrer_domain":
      return sql`coalesce(f.referrer_domain, '')`;
    case "utm_source":
      return sql`coalesce(f.utm_source, '')`;
    case "utm_medium":
      return sql`coalesce(f.utm_medium, '')`;
    case "utm_campaign":
      return sql`coalesce(f.utm_campaign, '')`;
    case "landing_page":
      return sql`coalesce(f.landing_page, '')`;
  }
}

/**
 * The live (non-test) events as fact rows: one per click, lead, sale, refund and commission, each at its own
 * time, with the source dimensions of the click it came through (a lead's click; a sale's, refund's and
 * commission's customer's first click) and its measures. Every row is written once and never changes the
 * rows before it, so an hour's facts are final once the hour is over: the rollups and the raw reads
 * aggregate exactly the same rows.
 *
 * Lead measures count leads as received: `leads` (settled on arrival) and `provisional_leads` (browser
 * leads under `server_required`); the server-mode lead that settles a provisional one counts as a lead.
 * `commission_cents` is the commission created, before any refund reduces it.
 */
export function liveEventFacts(filter: { programId: number | null; ranges: readonly TimeRange[] }): SQL {
  return scopedEventFacts({
    program: (column) => (filter.programId === null ? sql`true` : sql`${column} = ${filter.programId}::int`),
    time: (column) => within(column, filter.ranges),
  });
}

/** Which events: a condition on an event's program id column, and one on its time column. */
export interface FactScope {
  program: (column: SQL) => SQL;
  time: (column: SQL) => SQL;
}

/**
 * `liveEventFacts` with the conditions given as SQL, so they may refer to an outer row (the rollup job reads
 * each program's pending hours in one statement, through a lateral join).
 */
export function scopedEventFacts(scope: FactScope): SQL {
  const program = scope.program;
  const k = alias(clickEvents, "k");
  const c = alias(clickEvents, "c");
  const l = alias(leadEvents, "l");
  const s = alias(saleEvents, "s");
  const cu = alias(customers, "cu");
  const r = alias(refunds, "r");
  const m = alias(commissions, "m");
  const dims = sql`${c.linkId}, ${c.referrerDomain}, ${c.utmSource}, ${c.utmMedium}, ${c.utmCampaign}, ${c.landingPage}`;
  const customerClick = sql`left join ${customers} ${cu} on ${cu.id} = ${s.customerId}
    left join ${clickEvents} ${c} on ${c.clickId} = ${cu.clickId}`;
  return sql`
    select ${k.programId} as program_id, ${k.createdAt} as at, ${k.partnerId} as partner_id, ${k.linkId} as link_id,
           ${k.referrerDomain} as referrer_domain, ${k.utmSource} as utm_source, ${k.utmMedium} as utm_medium,
           ${k.utmCampaign} as utm_campaign, ${k.landingPage} as landing_page, '' as currency,
           1 as clicks, 0 as leads, 0 as provisional_leads, 0 as sales, 0::bigint as revenue_cents, 0 as refunds,
           0::bigint as refunded_cents, 0::bigint as commission_cents
    from ${clickEvents} ${k}
    where not ${k.isTest} and ${program(sql`${k.programId}`)} and ${scope.time(sql`${k.createdAt}`)}
    union all
    select ${l.programId}, ${l.createdAt}, coalesce(${l.partnerId}, ${c.partnerId}), ${dims}, '',
           0, case when ${l.provisional} then 0 else 1 end, case when ${l.provisional} then 1 else 0 end, 0, 0, 0, 0, 0
    from ${leadEvents} ${l}
    left join ${clickEvents} ${c} on ${c.clickId} = ${l.clickId}
    where not ${l.isTest} and ${l.programId} is not null and ${program(sql`${l.programId}`)}
      and ${scope.time(sql`${l.createdAt}`)}
    union all
    select ${s.programId}, ${s.createdAt}, ${s.partnerId}, ${dims}, ${s.currency},
           0, 0, 0, 1, ${s.amountCents}, 0, 0, 0
    from ${saleEvents} ${s}
    ${customerClick}
    where not ${s.isTest} and ${program(sql`${s.programId}`)} and ${scope.time(sql`${s.createdAt}`)}
    union all
    select ${s.programId}, ${r.createdAt}, ${s.partnerId}, ${dims}, ${s.currency},
           0, 0, 0, 0, 0, 1, ${r.amountCents}, 0
    from ${refunds} ${r}
    join ${saleEvents} ${s} on ${s.id} = ${r.saleId}
    ${customerClick}
    where not ${s.isTest} and ${program(sql`${s.programId}`)} and ${scope.time(sql`${r.createdAt}`)}
    union all
    select ${m.programId}, ${m.createdAt}, ${m.partnerId}, ${dims}, ${m.currency},
           0, 0, 0, 0, 0, 0, 0, ${m.amountCents}
    from ${commissions} ${m}
    join ${saleEvents} ${s} on ${s.id} = ${m.saleId}
    ${customerClick}
    where not ${m.isTest} and ${program(sql`${m.programId}`)} and ${scope.time(sql`${m.createdAt}`)}`;
}

/** `sum(<measure>)` for every measure, named like it. */
export const summedMeasures = sql.raw(measureColumns.map((m) => `sum(${m})::bigint as ${m}`).join(", "));
