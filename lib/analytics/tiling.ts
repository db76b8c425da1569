import type { PartialGrain, RollupGrain, tailGrain } from "../../schema/analytics.ts";

/** How far each grain of rollups reaches (null: not at all yet). */
export interface RollupReach {
  hoursUntil: Date | null;
  daysUntil: Date | null;
  monthsUntil: Date | null;
  /** Half-hour rows exist for [`halfHoursFrom`, `hoursUntil`) (absent or null: none). */
  halfHoursFrom?: Date | null;
  /**
   * The `hours_until` whose partial rows are written (absent or null: none). Only when it equals `hoursUntil`
   * may a range read the day under way [`daysUntil`, `hoursUntil`) and the month under way
   * [`monthsUntil`, `daysUntil`) as one bucket each.
   */
  partialsUntil?: Date | null;
  /**
   * The written `hour_partial` set covers [`tailFrom`, `tailUntil`) and is keyed by `tailUntil` (absent or
   * null: none). Only when `tailFrom` equals `hoursUntil` may a range read the hour under way from it.
   */
  tailFrom?: Date | null;
  tailUntil?: Date | null;
}

export interface Segment {
  source: RollupGrain | PartialGrain | typeof tailGrain | "raw";
  from: Date;
  to: Date;
  /** A partial segment's rows are keyed by the `hours_until` they were summed at, given here. */
  key?: Date;
}

const halfHourMs = 1_800_000;
const hourMs = 3_600_000;
const dayMs = 24 * hourMs;

function nextBoundary(grain: RollupGrain, at: Date): Date {
  if (grain === "half_hour") return new Date(at.getTime() + halfHourMs);
  if (grain === "hour") return new Date(at.getTime() + hourMs);
  if (grain === "day") return new Date(at.getTime() + dayMs);
  return new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth() + 1, 1));
}

function alignedTo(grain: RollupGrain, at: Date): boolean {
  const t = at.getTime();
  if (grain === "half_hour") return t % halfHourMs === 0;
  if (grain === "hour") return t % hourMs === 0;
  if (grain === "day") return t % dayMs === 0;
  return t % dayMs === 0 && at.getUTCDate() === 1;
}

function floorHalfHour(at: Date): Date {
  return new Date(Math.floor(at.getTime() / halfHourMs) * halfHourMs);
}

/**
 * Covers [from, to) exactly with the coarsest pieces available: whole UTC months, days, hours and half hours
 * from the rollups where they reach, raw events for the rest (the partial half hours at either end, a
 * quarter-hour offset's quarter, half hours before `halfHoursFrom`, and whatever the rollup job has not
 * reached yet). Consecutive pieces of one source are merged, so a range has at most a handful of segments
 * whatever its length. Where the partial rows are written, the month under way and the day under way are one
 * piece each (`month_partial`, `day_partial`): a range ending now reads two buckets for them, not up to 30
 * daily and 23 hourly ones. Where the `hour_partial` set is written, the hour under way up to `tailUntil` is
 * one more piece, and only the last couple of minutes are read raw.
 */
export function tileRange(from: Date, to: Date, reach: RollupReach): Segment[] {
  // Half hours are written with the hours, so they reach as far; they start at `halfHoursFrom` (none: never).
  const halvesFrom = reach.halfHoursFrom?.getTime() ?? Number.POSITIVE_INFINITY;
  const limits: Record<RollupGrain, number> = {
    half_hour: reach.hoursUntil?.getTime() ?? Number.NEGATIVE_INFINITY,
    hour: reach.hoursUntil?.getTime() ?? Number.NEGATIVE_INFINITY,
    day: Math.min(reach.daysUntil?.getTime() ?? Number.NEGATIVE_INFINITY, reach.hoursUntil?.getTime() ?? 0),
    month: Math.min(
      reach.monthsUntil?.getTime() ?? Number.NEGATIVE_INFINITY,
      reach.daysUntil?.getTime() ?? 0,
      reach.hoursUntil?.getTime() ?? 0,
    ),
  };
  const segments: Segment[] = [];
  const push = (source: Segment["source"], a: Date, b: Date) => {
    const last = segments[segments.length - 1];
    if (last && last.source === source && last.to.getTime() === a.getTime()) last.to = b;
    else segments.push({ source, from: a, to: b });
  };
  let cursor = from;
  const end = to.getTime();
  const partialsKey =
    reach.partialsUntil && reach.hoursUntil && reach.partialsUntil.getTime() === reach.hoursUntil.getTime()
      ? reach.hoursUntil
      : null;
  const partials: Array<{ source: PartialGrain; from: Date | null; to: Date | null }> = partialsKey
    ? [
        { source: "month_partial", from: reach.monthsUntil, to: reach.daysUntil },
        { source: "day_partial", from: reach.daysUntil, to: reach.hoursUntil },
      ]
    : [];
  const tail =
    reach.tailFrom &&
    reach.tailUntil &&
    reach.hoursUntil &&
    reach.tailFrom.getTime() === reach.hoursUntil.getTime() &&
    reach.tailUntil.getTime() > reach.hoursUntil.getTime()
      ? { from: reach.tailFrom, to: reach.tailUntil }
      : null;
  while (cursor.getTime() < end) {
    if (tail && tail.from.getTime() === cursor.getTime() && tail.to.getTime() <= end) {
      segments.push({ source: "hour_partial", from: cursor, to: tail.to, key: tail.to });
      cursor = tail.to;
      continue;
    }
    const partial = partials.find(
      (p) =>
        p.from &&
        p.to &&
        p.from.getTime() === cursor.getTime() &&
        p.to.getTime() > cursor.getTime() &&
        p.to.getTime() <= end,
    );
    if (partial?.to && partialsKey) {
      segments.push({ source: partial.source, from: cursor, to: partial.to, key: partialsKey });
      cursor = partial.to;
      continue;
    }
    const grain = (["month", "day", "hour", "half_hour"] as const).find((g) => {
      if (!alignedTo(g, cursor)) return false;
      if (g === "half_hour" && cursor.getTime() < halvesFrom) return false;
      const next = nextBoundary(g, cursor).getTime();
      return next <= end && next <= limits[g];
    });
    if (grain) {
      const next = nextBoundary(grain, cursor);
      push(grain, cursor, next);
      cursor = next;
      continue;
    }
    // Raw up to the next half hour, where a half-hourly or hourly rollup may take over, or to the end.
    const nextHalfHour = floorHalfHour(cursor).getTime() + halfHourMs;
    const rawEnd = cursor.getTime() >= limits.hour ? end : Math.min(end, nextHalfHour);
    const stop = new Date(rawEnd);
    push("raw", cursor, stop);
    cursor = stop;
  }
  return segments;
}
