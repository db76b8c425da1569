import { type SQL, sql } from "drizzle-orm";
import type { AnalyticsDimension } from "../../schema/analytics.ts";

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
  const dims = sql`c.link_id, c.referrer_domain, c.utm_source, c.utm_medium, c.utm_campaign, c.landing_page`;
  return sql`
    select k.program_id, k.created_at as at, k.partner_id, k.link_id, k.referrer_domain, k.utm_source,
           k.utm_medium, k.utm_campaign, k.landing_page, '' as currency,
           1 as clicks, 0 as leads, 0 as provisional_leads, 0 as sales, 0::bigint as revenue_cents, 0 as refunds,
           0::bigint as refunded_cents, 0::bigint as commission_cents
    from affiliate_click_events k
    where not k.is_test and ${program(sql`k.program_id`)} and ${scope.time(sql`k.created_at`)}
    union all
    select l.program_id, l.created_at, coalesce(l.partner_id, c.partner_id), ${dims}, '',
           0, case when l.provisional then 0 else 1 end, case when l.provisional then 1 else 0 end, 0, 0, 0, 0, 0
    from affiliate_lead_events l
    left join affiliate_click_events c on c.click_id = l.click_id
    where not l.is_test and l.program_id is not null and ${program(sql`l.program_id`)}
      and ${scope.time(sql`l.created_at`)}
    union all
    select s.program_id, s.created_at, s.partner_id, ${dims}, s.currency,
           0, 0, 0, 1, s.amount_cents, 0, 0, 0
    from affiliate_sale_events s
    left join customers cu on cu.id = s.customer_id
    left join affiliate_click_events c on c.click_id = cu.click_id
    where not s.is_test and ${program(sql`s.program_id`)} and ${scope.time(sql`s.created_at`)}
    union all
    select s.program_id, r.created_at, s.partner_id, ${dims}, s.currency,
           0, 0, 0, 0, 0, 1, r.amount_cents, 0
    from refunds r
    join affiliate_sale_events s on s.id = r.sale_id
    left join customers cu on cu.id = s.customer_id
    left join affiliate_click_events c on c.click_id = cu.click_id
    where not s.is_test and ${program(sql`s.program_id`)} and ${scope.time(sql`r.created_at`)}
    union all
    select m.program_id, m.created_at, m.partner_id, ${dims}, m.currency,
           0, 0, 0, 0, 0, 0, 0, m.amount_cents
    from commissions m
    join affiliate_sale_events s on s.id = m.sale_id
    left join customers cu on cu.id = s.customer_id
    left join affiliate_click_events c on c.click_id = cu.click_id
    where not m.is_test and ${program(sql`m.program_id`)} and ${scope.time(sql`m.created_at`)}`;
}

/** `sum(<measure>)` for every measure, named like it. */
export const summedMeasures = sql.raw(measureColumns.map((m) => `sum(${m})::bigint as ${m}`).join(", "));
