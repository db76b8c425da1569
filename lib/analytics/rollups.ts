import { type SQL, sql } from "drizzle-orm";
import { alias } from "drizzle-orm/pg-core";
import {
  analyticsDimensions,
  analyticsRollupProgress,
  analyticsRollups,
  tailGrain,
} from "../../schema/analytics.ts";
import { commissions } from "../../schema/commissions.ts";
import { clickEvents, leadEvents, saleEvents } from "../../schema/events.ts";
import { programs } from "../../schema/programs.ts";
import type { Database } from "../db/client.ts";
import { columnList, columnName } from "../db/columns.ts";
import { dimensionValue, measureColumns, scopedEventFacts, summedMeasures } from "./event-facts.ts";

/**
 * An hour is rolled up once it ended this long ago. Events carry the time their request started
 * (`created_at` is the request's clock), so a write still in flight may commit an event a few seconds into
 * an hour that is already over; two minutes leave every request (30 seconds at most on Workers) time to
 * commit. Answers never wait on it: whatever the rollups do not reach yet is read raw.
 */
export const rollupSettleMs = 2 * 60_000;

/** Hours of one program rolled up by one run, at most (a long backlog is caught up over several runs). */
export const defaultMaxHoursPerRun = 24 * 31;

/** One lock serializes every run of the job and the rebuild (any key the other jobs do not use). */
const rollupLockKey = 7_301_215_001;

const hourMs = 3_600_000;
const minuteMs = 60_000;

/** `hour_partial` sets older than this are deleted: a reader that read the progress just before still finds its set. */
const tailSetKeptMs = 10 * minuteMs;

export interface RollupOptions {
  /** Only these programs (the rebuild of one program, tests); default every program. */
  programIds?: readonly number[];
  maxHoursPerRun?: number;
}

export interface RollupRun {
  /** Programs whose hours moved forward in this run. */
  programs: number;
  /** Half-hour, hour, day and month rows written (and partial rows). */
  rows: number;
}

function programScope(column: SQL, programIds: readonly number[] | undefined): SQL {
  if (!programIds) return sql`true`;
  if (programIds.length === 0) return sql`false`;
  return sql`${column} = any(${`{${programIds.map((id) => Math.trunc(id)).join(",")}}`}::int[])`;
}

/** The measures' columns: the facts name them as the rollup table does (`measureColumns`). */
const sums = sql.raw(measureColumns.join(", "));

/** Progress rows (`g` where a statement updates them) and rollup rows (`r` where one reads them). */
const g = analyticsRollupProgress;
const r = alias(analyticsRollups, "r");
/** An insert of rollup rows: the key columns, then the measures. */
const rollupInsert = sql`insert into ${analyticsRollups} (${columnList(
  analyticsRollups.programId,
  analyticsRollups.dimension,
  analyticsRollups.grain,
  analyticsRollups.bucketStart,
  analyticsRollups.value,
  analyticsRollups.currency,
)}, ${sums})`;
/** The first event's time of the program `p`. */
function firstEventAt(
  table: typeof clickEvents | typeof leadEvents | typeof saleEvents | typeof commissions,
) {
  return sql`(select min(${table.createdAt}) from ${table} where ${table.programId} = ${programs.id})`;
}

/** The hours up to which a run at `now` may roll up: the last whole UTC hour that ended `rollupSettleMs` ago. */
export function rollupTarget(now: Date): Date {
  return new Date(Math.floor((now.getTime() - rollupSettleMs) / hourMs) * hourMs);
}

/**
 * The end of the hour-under-way set a run at `now` may write: the last whole minute that ended
 * `rollupSettleMs` ago (the same allowance for requests in flight as the hours get).
 */
export function tailTarget(now: Date): Date {
  return new Date(Math.floor((now.getTime() - rollupSettleMs) / minuteMs) * minuteMs);
}

/**
 * One run of the rollup job, in one transaction (one batch) that holds the rollup lock from its first
 * statement, so two overlapping runs never roll an hour twice: the second waits, then finds the hours done.
 * The rows are plain inserts under the primary key, so even without the lock a second copy of an hour
 * would fail the whole run rather than count twice.
 *
 * 1. A program with events and no progress row starts at its first event's UTC hour, day and month, as soon
 *    as that hour is the target's (a new program's first hour under way gets its `hour_partial` set at once:
 *    a launch's first hour may hold thousands of events).
 * 2. Each program's hours from `hours_until` up to the target (at most `maxHoursPerRun`) are read from the
 *    raw events (the same facts the raw reads use) and written as half-hourly and hourly rows, one per
 *    dimension, value and currency; `hours_until` moves to the end of them.
 * 3. Whole UTC days below `hours_until` are summed from the hourly rows into daily rows, whole UTC months
 *    below `days_until` from the daily rows into monthly rows.
 * 4. When `hours_until` moved (or the set is missing), the partial rows of the day and the month under way
 *    are summed from the hourly and daily rows and keyed by `hours_until` (`partials_until` marks them
 *    written), and sets older than two hours are deleted.
 * 5. For a program whose hours have reached the target, the hour under way up to the tail target
 *    (`tailTarget`) is summed into `hour_partial` rows keyed by that minute: the previous set, when it still
 *    starts at `hours_until`, plus the raw events since it (so each event is read about once, not once a
 *    minute); otherwise from `hours_until`. `tail_from`/`tail_until` mark the set written; sets older than
 *    ten minutes are deleted.
 *
 * Refunds and commissions are facts at their own time, so a refund of an old sale lands in the hour it
 * arrived in, which is not rolled up yet: no past row ever changes.
 */
export async function rollUpAnalytics(
  db: Database,
  now: Date,
  options: RollupOptions = {},
): Promise<RollupRun> {
  const target = rollupTarget(now).toISOString();
  const maxHours = Math.max(1, Math.trunc(options.maxHoursPerRun ?? defaultMaxHoursPerRun));
  const inScope = (column: SQL) => programScope(column, options.programIds);
  const dimensions = sql.join(
    analyticsDimensions.map((d) => sql`(${d}, ${dimensionValue(d)})`),
    sql`, `,
  );
  const pending = sql`
    select ${g.programId} as program_id, ${g.hoursUntil} as from_at,
           least(${target}::timestamptz, ${g.hoursUntil} + ${maxHours}::int * interval '1 hour') as to_at
    from ${g}
    where ${g.hoursUntil} < ${target}::timestamptz and ${inScope(sql`${g.programId}`)}`;
  const tailUntil = tailTarget(now).toISOString();
  const results = await db.batch([
    db.execute(sql`select pg_advisory_xact_lock(${rollupLockKey}::bigint)`),
    db.execute(sql`
      insert into ${g} (${columnList(g.programId, g.hoursUntil, g.daysUntil, g.monthsUntil, g.halfHoursFrom)})
      select id, date_trunc('hour', first_at, 'UTC'), date_trunc('day', first_at, 'UTC'),
             date_trunc('month', first_at, 'UTC'), date_trunc('hour', first_at, 'UTC')
      from (
        select ${programs.id} as id, least(
                 ${firstEventAt(clickEvents)},
                 ${firstEventAt(leadEvents)},
                 ${firstEventAt(saleEvents)},
                 ${firstEventAt(commissions)}) as first_at
        from ${programs}
        where ${inScope(sql`${programs.id}`)}
          and not exists (select 1 from ${g} where ${g.programId} = ${programs.id})
      ) f
      where first_at is not null and date_trunc('hour', first_at, 'UTC') <= ${target}::timestamptz`),
    // Statement 2: the facts are read once, summed per half hour; the hours are summed from those sums. A
    // program rolled up before half hours existed (half_hours_from null) has them from the first hour this
    // code rolls.
    db.execute(sql`
      with w as (${pending}),
      halves as materialized (
        select f.program_id, d.dimension, date_bin('30 minutes', f.at, timestamptz '2000-01-01 00:00:00+00') as bucket,
               d.value, f.currency, ${summedMeasures}
        from w
        cross join lateral (${scopedEventFacts({
          program: (column) => sql`${column} = w.program_id`,
          time: (column) => sql`${column} >= w.from_at and ${column} < w.to_at`,
        })}) f
        cross join lateral (values ${dimensions}) d(dimension, value)
        group by 1, 2, 3, 4, 5),
      half_hourly as (
        ${rollupInsert}
        select program_id, dimension, 'half_hour', bucket, value, currency, ${sums} from halves
        returning 1),
      hourly as (
        ${rollupInsert}
        select program_id, dimension, 'hour', date_trunc('hour', bucket, 'UTC'), value, currency, ${summedMeasures}
        from halves
        group by 1, 2, 3, 4, 5, 6
        returning 1),
      moved as (
        update ${g} set ${columnName(g.hoursUntil)} = w.to_at, ${columnName(g.updatedAt)} = ${now.toISOString()}::timestamptz,
               ${columnName(g.halfHoursFrom)} = coalesce(${g.halfHoursFrom}, w.from_at)
        from w where ${g.programId} = w.program_id
        returning 1)
      select (select count(*) from moved) as programs,
             (select count(*) from hourly) + (select count(*) from half_hourly) as rows`),
    db.execute(sql`
      with w as (
        select ${g.programId} as program_id, ${g.daysUntil} as from_at, date_trunc('day', ${g.hoursUntil}, 'UTC') as to_at
        from ${g}
        where ${g.daysUntil} < date_trunc('day', ${g.hoursUntil}, 'UTC') and ${inScope(sql`${g.programId}`)}),
      daily as (
        ${rollupInsert}
        select ${r.programId}, ${r.dimension}, 'day', date_trunc('day', ${r.bucketStart}, 'UTC'), ${r.value}, ${r.currency},
               ${summedMeasures}
        from w join ${analyticsRollups} ${r}
          on ${r.programId} = w.program_id and ${r.grain} = 'hour'
         and ${r.bucketStart} >= w.from_at and ${r.bucketStart} < w.to_at
        group by 1, 2, 3, 4, 5, 6
        returning 1),
      moved as (
        update ${g} set ${columnName(g.daysUntil)} = w.to_at from w where ${g.programId} = w.program_id
        returning 1)
      select (select count(*) from moved) as programs, (select count(*) from daily) as rows`),
    db.execute(sql`
      with w as (
        select ${g.programId} as program_id, ${g.monthsUntil} as from_at, date_trunc('month', ${g.daysUntil}, 'UTC') as to_at
        from ${g}
        where ${g.monthsUntil} < date_trunc('month', ${g.daysUntil}, 'UTC') and ${inScope(sql`${g.programId}`)}),
      monthly as (
        ${rollupInsert}
        select ${r.programId}, ${r.dimension}, 'month', date_trunc('month', ${r.bucketStart}, 'UTC'), ${r.value},
               ${r.currency}, ${summedMeasures}
        from w join ${analyticsRollups} ${r}
          on ${r.programId} = w.program_id and ${r.grain} = 'day'
         and ${r.bucketStart} >= w.from_at and ${r.bucketStart} < w.to_at
        group by 1, 2, 3, 4, 5, 6
        returning 1),
      moved as (
        update ${g} set ${columnName(g.monthsUntil)} = w.to_at from w where ${g.programId} = w.program_id
        returning 1)
      select (select count(*) from moved) as programs, (select count(*) from monthly) as rows`),
    // Statement 4: older partial sets go once two hours have passed, so a reader that read the progress just
    // before this run still finds the set it was told about.
    db.execute(sql`
      with w as (
        select ${g.programId} as program_id, ${g.hoursUntil} as hours_until, ${g.daysUntil} as days_until,
               ${g.monthsUntil} as months_until
        from ${g}
        where ${g.partialsUntil} is distinct from ${g.hoursUntil} and ${inScope(sql`${g.programId}`)}),
      day_partial as (
        ${rollupInsert}
        select ${r.programId}, ${r.dimension}, 'day_partial', w.hours_until, ${r.value}, ${r.currency}, ${summedMeasures}
        from w join ${analyticsRollups} ${r}
          on ${r.programId} = w.program_id and ${r.grain} = 'hour'
         and ${r.bucketStart} >= w.days_until and ${r.bucketStart} < w.hours_until
        group by ${r.programId}, ${r.dimension}, w.hours_until, ${r.value}, ${r.currency}
        returning 1),
      month_partial as (
        ${rollupInsert}
        select ${r.programId}, ${r.dimension}, 'month_partial', w.hours_until, ${r.value}, ${r.currency}, ${summedMeasures}
        from w join ${analyticsRollups} ${r}
          on ${r.programId} = w.program_id and ${r.grain} = 'day'
         and ${r.bucketStart} >= w.months_until and ${r.bucketStart} < w.days_until
        group by ${r.programId}, ${r.dimension}, w.hours_until, ${r.value}, ${r.currency}
        returning 1),
      gone as (
        delete from ${analyticsRollups} using w
        where ${analyticsRollups.programId} = w.program_id and ${analyticsRollups.grain} in ('day_partial', 'month_partial')
          and ${analyticsRollups.bucketStart} < w.hours_until - interval '2 hours'
        returning 1),
      moved as (
        update ${g} set ${columnName(g.partialsUntil)} = w.hours_until from w where ${g.programId} = w.program_id
        returning 1)
      select (select count(*) from moved) as programs,
             (select count(*) from day_partial) + (select count(*) from month_partial) as rows,
             (select count(*) from gone) as removed`),
    // Statement 5: while the previous set still counts from hours_until (tail_from), carry it over
    // (carried_until) and read only what came since.
    db.execute(sql`
      with w as (
        select ${g.programId} as program_id, ${g.hoursUntil} as from_at, ${tailUntil}::timestamptz as to_at,
               case when ${g.tailFrom} = ${g.hoursUntil} and ${g.tailUntil} < ${tailUntil}::timestamptz
                    then ${g.tailUntil} end as carried_until
        from ${g}
        where ${g.hoursUntil} = ${target}::timestamptz and ${g.hoursUntil} < ${tailUntil}::timestamptz
          and ${g.tailUntil} is distinct from ${tailUntil}::timestamptz and ${inScope(sql`${g.programId}`)}),
      tail as (
        ${rollupInsert}
        select program_id, dimension, ${tailGrain}::text, to_at, value, currency, ${summedMeasures}
        from (
          select w.program_id, w.to_at, ${r.dimension} as dimension, ${r.value} as value, ${r.currency} as currency,
                 ${sql.raw(measureColumns.map((m) => `r.${m}`).join(", "))}
          from w join ${analyticsRollups} ${r}
            on ${r.programId} = w.program_id and ${r.grain} = ${tailGrain} and ${r.bucketStart} = w.carried_until
          union all
          select w.program_id, w.to_at, d.dimension, d.value, f.currency, ${sql.raw(measureColumns.map((m) => `f.${m}`).join(", "))}
          from w
          cross join lateral (${scopedEventFacts({
            program: (column) => sql`${column} = w.program_id`,
            time: (column) => sql`${column} >= coalesce(w.carried_until, w.from_at) and ${column} < w.to_at`,
          })}) f
          cross join lateral (values ${dimensions}) d(dimension, value)
        ) u
        group by program_id, dimension, to_at, value, currency
        returning 1),
      gone as (
        delete from ${analyticsRollups} using w
        where ${analyticsRollups.programId} = w.program_id and ${analyticsRollups.grain} = ${tailGrain}
          and ${analyticsRollups.bucketStart} < w.to_at - ${`${tailSetKeptMs} milliseconds`}::interval
        returning 1),
      moved as (
        update ${g} set ${columnName(g.tailFrom)} = w.from_at, ${columnName(g.tailUntil)} = w.to_at
        from w where ${g.programId} = w.program_id
        returning 1)
      select (select count(*) from moved) as programs, (select count(*) from tail) as rows,
             (select count(*) from gone) as removed`),
  ]);
  const counts = results.slice(2).map((r) => r.rows[0] as { programs: unknown; rows: unknown });
  return {
    programs: Number(counts[0]?.programs ?? 0),
    rows: counts.reduce((n, c) => n + Number(c?.rows ?? 0), 0),
  };
}

/**
 * Rolls up until nothing is left below the target: the job's catch-up, and the second half of a rebuild.
 * Returns the runs' totals.
 */
export async function rollUpAll(db: Database, now: Date, options: RollupOptions = {}): Promise<RollupRun> {
  const total: RollupRun = { programs: 0, rows: 0 };
  for (;;) {
    const run = await rollUpAnalytics(db, now, options);
    total.rows += run.rows;
    total.programs = Math.max(total.programs, run.programs);
    if (run.programs === 0) return total;
  }
}

/**
 * Throws away the rollups (of the given programs, or all) and rolls them up again from the raw events. While
 * it runs, the programs being rebuilt are answered from raw events (no progress row), so answers stay exact.
 */
export async function rebuildRollups(
  db: Database,
  now: Date,
  options: { programIds?: readonly number[] } = {},
): Promise<RollupRun> {
  const inScope = (column: SQL) => programScope(column, options.programIds);
  await db.batch([
    db.execute(sql`select pg_advisory_xact_lock(${rollupLockKey}::bigint)`),
    db.execute(sql`delete from ${g} where ${inScope(sql`${g.programId}`)}`),
    db.execute(sql`delete from ${analyticsRollups} where ${inScope(sql`${analyticsRollups.programId}`)}`),
  ]);
  return rollUpAll(db, now, {
    ...(options.programIds ? { programIds: options.programIds } : {}),
    maxHoursPerRun: 24 * 92,
  });
}
