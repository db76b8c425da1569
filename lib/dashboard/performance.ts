import { type SQL, sql } from "drizzle-orm";
import { analyticsRollups } from "../../schema/analytics.ts";
import { type AnalyticsQuery, parseAnalyticsQuery } from "../analytics/analytics-request.ts";
import { readReach, readSources } from "../analytics/analytics-store.ts";
import { type AnalyticsReport, buildReport, type SourceFigures } from "../analytics/build-report.ts";
import { liveEventFacts, measureColumns, summedMeasures } from "../analytics/event-facts.ts";
import { type RollupReach, type Segment, tileRange } from "../analytics/tiling.ts";
import { addDays, type LocalDate, localDateOf, startOfLocalDate } from "../analytics/zoned-time.ts";
import type { Database } from "../db/client.ts";

const knownParameters = ["interval", "start", "end", "timezone", "limit"] as const;

export interface InvalidParameter {
  parameter: string;
  message: string;
}

/**
 * The performance query: the analytics range parameters (`interval` or `start`/`end`, `timezone`) and
 * `limit` (partners listed, the rest summed). Validated by the analytics parser, so both routes agree.
 */
export function parsePerformanceQuery(
  params: Record<string, string>,
  now: Date,
): { ok: true; query: AnalyticsQuery } | { ok: false; error: InvalidParameter } {
  for (const name of Object.keys(params)) {
    if (!(knownParameters as readonly string[]).includes(name)) {
      const message = `Unknown parameter ${name.slice(0, 40)}. Known: ${knownParameters.join(", ")}.`;
      return { ok: false, error: { parameter: name, message } };
    }
  }
  return parseAnalyticsQuery({ ...params, group_by: "partner" }, now);
}

export interface DayMoney {
  sales: number;
  revenue_cents: number;
  refunds: number;
  refunded_cents: number;
  net_revenue_cents: number;
  commission_cents: number;
}

export interface DayPoint {
  /** The brand's local date (YYYY-MM-DD in `timezone`). */
  date: string;
  clicks: number;
  leads: number;
  provisional_leads: number;
  sales: number;
  refunds: number;
  money: Record<string, DayMoney>;
}

export interface PartnerPerformance extends SourceFigures {
  /** Null for the "(direct)" row: events without a partner. */
  partner_id: number | null;
  name: string;
}

export interface PerformanceReport {
  program_id: number;
  timezone: string;
  interval: string | null;
  start: string;
  end: string;
  totals: SourceFigures;
  series: DayPoint[];
  partners: PartnerPerformance[];
  other_partners: AnalyticsReport["other"];
}

const maxSeriesSegments = 64;

const isoDate = (d: LocalDate) =>
  `${String(d.year).padStart(4, "0")}-${String(d.month).padStart(2, "0")}-${String(d.day).padStart(2, "0")}`;

/**
 * The range cut at the brand's midnights, each day tiled on its own so no hourly rollup row straddles two
 * local days (zones with a half-hour offset), then merged. Daily and monthly rollups are UTC, so only the
 * hourly ones serve a per-day series. Too many pieces (a half-hour zone over a long range): all raw.
 */
export function seriesSegments(query: AnalyticsQuery, hoursUntil: Date | null): Segment[] {
  const reach: RollupReach = { hoursUntil, daysUntil: null, monthsUntil: null };
  const segments: Segment[] = [];
  let day = localDateOf(query.timeZone, query.from);
  let cursor = query.from;
  while (cursor.getTime() < query.to.getTime()) {
    day = addDays(day, 1);
    const next = new Date(Math.min(startOfLocalDate(query.timeZone, day).getTime(), query.to.getTime()));
    for (const piece of tileRange(cursor, next, reach)) {
      const last = segments[segments.length - 1];
      if (last && last.source === piece.source && last.to.getTime() === piece.from.getTime())
        last.to = piece.to;
      else segments.push({ ...piece });
    }
    cursor = next;
  }
  if (segments.length > maxSeriesSegments) return [{ source: "raw", from: query.from, to: query.to }];
  return segments;
}

function hourRollups(segments: readonly Segment[]): SQL {
  const hours = segments.filter((s) => s.source === "hour");
  if (hours.length === 0) return sql`false`;
  return sql`(${sql.join(
    hours.map(
      (s) =>
        sql`(${analyticsRollups.bucketStart} >= ${s.from.toISOString()}::timestamptz and ${analyticsRollups.bucketStart} < ${s.to.toISOString()}::timestamptz)`,
    ),
    sql` or `,
  )})`;
}

/** Per local day and currency: hourly rollups where they reach, raw live events for the rest. One statement. */
async function readSeries(
  db: Database,
  programId: number,
  query: AnalyticsQuery,
  segments: readonly Segment[],
): Promise<Record<string, unknown>[]> {
  const raw = segments.filter((s) => s.source === "raw").map((s) => [s.from, s.to] as const);
  const sums = sql.raw(measureColumns.map((m) => `sum(${m})::bigint as ${m}`).join(", "));
  const result = await db.execute<Record<string, unknown>>(sql`
    with rolled as (
      select (${analyticsRollups.bucketStart} at time zone ${query.timeZone})::date as day,
             ${analyticsRollups.currency} as currency, ${summedMeasures}
      from ${analyticsRollups}
      where ${analyticsRollups.programId} = ${programId}::int and ${analyticsRollups.dimension} = 'partner'
        and ${analyticsRollups.grain} = 'hour' and ${hourRollups(segments)}
      group by 1, 2
    ),
    raw as (
      select (f.at at time zone ${query.timeZone})::date as day, f.currency, ${summedMeasures}
      from (${liveEventFacts({ programId, ranges: raw })}) f
      group by 1, 2
    )
    select to_char(day, 'YYYY-MM-DD') as day, currency, ${sums}
    from (select * from rolled union all select * from raw) u
    group by 1, 2 order by 1, 2`);
  return result.rows;
}

function emptyPoint(date: string): DayPoint {
  return { date, clicks: 0, leads: 0, provisional_leads: 0, sales: 0, refunds: 0, money: {} };
}

/** Every local day of the range, in order, zeros included, so a chart needs no gap filling. */
export function buildSeries(query: AnalyticsQuery, rows: readonly Record<string, unknown>[]): DayPoint[] {
  const points = new Map<string, DayPoint>();
  const last = localDateOf(query.timeZone, new Date(query.to.getTime() - 1));
  const lastText = isoDate(last);
  for (let d = localDateOf(query.timeZone, query.from); ; d = addDays(d, 1)) {
    const text = isoDate(d);
    points.set(text, emptyPoint(text));
    if (text >= lastText) break;
  }
  for (const row of rows) {
    const point = points.get(String(row.day));
    if (!point) continue;
    const n = (m: string) => Number(row[m] ?? 0);
    point.clicks += n("clicks");
    point.leads += n("leads");
    point.provisional_leads += n("provisional_leads");
    point.sales += n("sales");
    point.refunds += n("refunds");
    const currency = String(row.currency ?? "");
    if (currency === "") continue;
    const money = point.money[currency] ?? {
      sales: 0,
      revenue_cents: 0,
      refunds: 0,
      refunded_cents: 0,
      net_revenue_cents: 0,
      commission_cents: 0,
    };
    money.sales += n("sales");
    money.revenue_cents += n("revenue_cents");
    money.refunds += n("refunds");
    money.refunded_cents += n("refunded_cents");
    money.commission_cents += n("commission_cents");
    money.net_revenue_cents = money.revenue_cents - money.refunded_cents;
    point.money[currency] = money;
  }
  return [...points.values()];
}

/**
 * Performance of one program over the range: totals and per-partner figures from the analytics-by-source
 * report (dimension partner), and a per-day series in the brand's time zone. Two round trips: how far the
 * rollups reach, then the partner report and the series side by side.
 */
export async function readPerformance(
  db: Database,
  programId: number,
  query: AnalyticsQuery,
): Promise<PerformanceReport> {
  // How far this program's rollups reach (one row per program; none: everything is read raw).
  const reach = await readReach(db, programId);
  const [sources, seriesRows] = await Promise.all([
    readSources(db, {
      programId,
      dimension: "partner",
      segments: tileRange(query.from, query.to, reach),
      limit: query.limit,
    }),
    readSeries(db, programId, query, seriesSegments(query, reach.hoursUntil)),
  ]);
  const report = buildReport(programId, query, sources);
  return {
    program_id: programId,
    timezone: query.timeZone,
    interval: query.interval,
    start: report.start,
    end: report.end,
    totals: report.totals,
    series: buildSeries(query, seriesRows),
    partners: report.rows.map(({ source, value, label: _label, ...figures }) => ({
      partner_id: value === null ? null : Number(value),
      name: source,
      ...figures,
    })),
    other_partners: report.other,
  };
}
