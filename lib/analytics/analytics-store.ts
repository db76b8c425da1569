import { eq, type SQL, sql } from "drizzle-orm";
import {
  type AnalyticsDimension,
  analyticsRollupProgress,
  analyticsRollups,
} from "../../schema/analytics.ts";
import { partners, referralLinks } from "../../schema/partners.ts";
import { programApiKeys } from "../../schema/programs.ts";
import { type ApiKeyRecord, apiKeyRecordFromRow, apiKeyRecordQuery } from "../auth/program-key.ts";
import type { Database } from "../db/client.ts";
import { fromDriverOrNull } from "../db/columns.ts";
import {
  dimensionValue,
  liveEventFacts,
  type Measure,
  measureColumns,
  summedMeasures,
} from "./event-facts.ts";
import type { RollupReach, Segment } from "./tiling.ts";

/** The key and how far its program's rollups reach, in one round trip (a batch of two reads). */
export async function readKeyAndReach(
  db: Database,
  keyHash: string,
): Promise<{ key: ApiKeyRecord | null; reach: RollupReach }> {
  const g = analyticsRollupProgress;
  const k = programApiKeys;
  const [keyRows, reachRows] = await db.batch([
    db.execute(apiKeyRecordQuery(keyHash)),
    db.execute(sql`
      select ${g.hoursUntil} as hours_until, ${g.daysUntil} as days_until, ${g.monthsUntil} as months_until,
             ${g.halfHoursFrom} as half_hours_from, ${g.partialsUntil} as partials_until,
             ${g.tailFrom} as tail_from, ${g.tailUntil} as tail_until
      from ${g}
      where ${g.programId} = (select ${k.programId} from ${k} where ${k.keyHash} = ${keyHash}::text and ${k.revokedAt} is null)`),
  ]);
  const reach = (reachRows.rows[0] ?? {}) as Record<string, unknown>;
  return {
    key: apiKeyRecordFromRow(keyRows.rows[0] as Parameters<typeof apiKeyRecordFromRow>[0]),
    reach: {
      hoursUntil: fromDriverOrNull(g.hoursUntil, reach.hours_until),
      daysUntil: fromDriverOrNull(g.daysUntil, reach.days_until),
      monthsUntil: fromDriverOrNull(g.monthsUntil, reach.months_until),
      halfHoursFrom: fromDriverOrNull(g.halfHoursFrom, reach.half_hours_from),
      partialsUntil: fromDriverOrNull(g.partialsUntil, reach.partials_until),
      tailFrom: fromDriverOrNull(g.tailFrom, reach.tail_from),
      tailUntil: fromDriverOrNull(g.tailUntil, reach.tail_until),
    },
  };
}

/**
 * How far one program's rollups reach, read by its id (the dashboard's reads, which find the program through
 * a membership, not a key).
 */
export async function readReach(db: Database, programId: number): Promise<RollupReach> {
  const g = analyticsRollupProgress;
  const [progress] = await db
    .select({
      hoursUntil: g.hoursUntil,
      daysUntil: g.daysUntil,
      monthsUntil: g.monthsUntil,
      halfHoursFrom: g.halfHoursFrom,
      partialsUntil: g.partialsUntil,
      tailFrom: g.tailFrom,
      tailUntil: g.tailUntil,
    })
    .from(g)
    .where(eq(g.programId, programId));
  return {
    hoursUntil: progress?.hoursUntil ?? null,
    daysUntil: progress?.daysUntil ?? null,
    monthsUntil: progress?.monthsUntil ?? null,
    halfHoursFrom: progress?.halfHoursFrom ?? null,
    partialsUntil: progress?.partialsUntil ?? null,
    tailFrom: progress?.tailFrom ?? null,
    tailUntil: progress?.tailUntil ?? null,
  };
}

export type MeasureValues = Record<Measure, number>;

export interface SourceRow {
  /** The dimension value; '' for "(direct)"; null for the row summing every source past the limit. */
  value: string | null;
  label: string | null;
  currency: string;
  measures: MeasureValues;
}

export interface SourcesRead {
  rows: SourceRow[];
  sources: number;
  otherSources: number;
}

/**
 * The rollup rows of the rolled-up segments, one range read per segment (a union, not one `or`, so each is
 * an index range scan of the primary key: program, dimension, grain, bucket start).
 */
function rolledRows(programId: number, dimension: AnalyticsDimension, segments: readonly Segment[]): SQL {
  const a = analyticsRollups;
  const rolled = segments.filter((s) => s.source !== "raw");
  const select = sql`select ${a.value} as value, ${a.currency} as currency, ${columns} from ${a}`;
  if (rolled.length === 0) return sql`${select} where false`;
  return sql.join(
    rolled.map((s) =>
      s.key
        ? sql`
        ${select}
        where ${a.programId} = ${programId}::int and ${a.dimension} = ${dimension} and ${a.grain} = ${s.source}
          and ${a.bucketStart} = ${s.key.toISOString()}::timestamptz`
        : sql`
        ${select}
        where ${a.programId} = ${programId}::int and ${a.dimension} = ${dimension} and ${a.grain} = ${s.source}
          and ${a.bucketStart} >= ${s.from.toISOString()}::timestamptz and ${a.bucketStart} < ${s.to.toISOString()}::timestamptz`,
    ),
    sql` union all `,
  );
}

const columns = sql.raw(measureColumns.join(", "));

function labelOf(dimension: AnalyticsDimension): SQL {
  if (dimension === "partner") {
    return sql`(select ${partners.name} from ${partners} where o.value ~ '^[0-9]{1,9}$' and ${partners.id} = o.value::int)`;
  }
  if (dimension === "link") {
    return sql`(select ${referralLinks.shortLink} from ${referralLinks}
                where o.value ~ '^[0-9]{1,9}$' and ${referralLinks.id} = o.value::int)`;
  }
  return sql`null::text`;
}

/**
 * Sums each source's measures over the segments (rollup rows for the whole half hours, hours, days and months
 * and the partial sets, the raw events for the rest), ranks the sources (clicks, then sales, then leads, then
 * value) and returns the top `limit` per currency, with every other source summed into one row (value null).
 * One statement.
 */
export async function readSources(
  db: Database,
  q: { programId: number; dimension: AnalyticsDimension; segments: readonly Segment[]; limit: number },
): Promise<SourcesRead> {
  const raw = q.segments.filter((s) => s.source === "raw").map((s) => [s.from, s.to] as const);
  const sums = sql.raw(measureColumns.map((m) => `sum(${m})::bigint as ${m}`).join(", "));
  // A few thousand rollup rows and an hour of raw events: starting parallel workers costs more than it saves
  // (tens of milliseconds on a busy server), so this transaction plans without them. Still one round trip.
  const [, result] = await db.batch([
    db.execute(sql`select set_config('max_parallel_workers_per_gather', '0', true)`),
    db.execute<Record<string, unknown>>(sql`
    with rolled as (
      select value, currency, ${summedMeasures} from (${rolledRows(q.programId, q.dimension, q.segments)}) r
      group by value, currency
    ),
    raw as (
      select ${dimensionValue(q.dimension)} as value, f.currency, ${summedMeasures}
      from (${liveEventFacts({ programId: q.programId, ranges: raw })}) f
      group by 1, 2
    ),
    combined as (
      select value, currency, ${sums} from (select * from rolled union all select * from raw) u
      group by value, currency
    ),
    ranked as (
      select value, row_number() over (
               order by sum(clicks) desc, sum(sales) desc, sum(leads) + sum(provisional_leads) desc, value) as rank
      from combined group by value
    ),
    limited as (
      select case when r.rank <= ${q.limit}::int then c.value end as value, c.currency,
             min(r.rank) as rank, ${sums}
      from combined c join ranked r on r.value = c.value
      group by 1, 2
    )
    select o.*, ${labelOf(q.dimension)} as label,
           (select count(*) from ranked) as sources,
           (select count(*) from ranked where rank > ${q.limit}::int) as other_sources
    from limited o
    order by o.rank, o.currency
  `),
  ]);
  const rows = result.rows;
  return {
    rows: rows.map((r) => ({
      value: (r.value as string | null) ?? null,
      label: (r.label as string | null) ?? null,
      currency: String(r.currency),
      measures: Object.fromEntries(measureColumns.map((m) => [m, Number(r[m])])) as MeasureValues,
    })),
    sources: Number(rows[0]?.sources ?? 0),
    otherSources: Number(rows[0]?.other_sources ?? 0),
  };
}
