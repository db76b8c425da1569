import { type AnalyticsDimension, analyticsDimensions } from "../../schema/analytics.ts";
import { addDays, isTimeZone, type LocalDate, localDateOf, startOfLocalDate } from "./zoned-time.ts";

export const intervalPresets = [
  "today",
  "yesterday",
  "last_7_days",
  "last_30_days",
  "last_90_days",
  "last_365_days",
  "month_to_date",
  "year_to_date",
] as const;
export type IntervalPreset = (typeof intervalPresets)[number];

export const maxRangeDays = 731;
export const maxLimit = 100;
const knownParameters = ["group_by", "interval", "start", "end", "timezone", "limit"] as const;

export interface AnalyticsQuery {
  dimension: AnalyticsDimension;
  timeZone: string;
  interval: IntervalPreset | null;
  from: Date;
  to: Date;
  limit: number;
}

/** A parameter the caller must change; the route renders it as a 400 naming it. */
export interface InvalidParameter {
  parameter: string;
  message: string;
}

const localDatePattern = /^(\d{4})-(\d{2})-(\d{2})$/;
const instantPattern = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/;

function parseLocalDate(text: string): LocalDate | null {
  const m = localDatePattern.exec(text);
  if (!m) return null;
  const date = { year: Number(m[1]), month: Number(m[2]), day: Number(m[3]) };
  const check = new Date(Date.UTC(date.year, date.month - 1, date.day));
  return check.getUTCMonth() === date.month - 1 && check.getUTCDate() === date.day ? date : null;
}

/** `start`/`end` as an instant: a local date is its midnight in the zone (`end` date: the next midnight). */
function parseBound(text: string, timeZone: string, isEnd: boolean): Date | null {
  const local = parseLocalDate(text);
  if (local) return startOfLocalDate(timeZone, isEnd ? addDays(local, 1) : local);
  if (!instantPattern.test(text)) return null;
  const instant = new Date(text);
  return Number.isNaN(instant.getTime()) ? null : instant;
}

function presetRange(preset: IntervalPreset, timeZone: string, now: Date): [Date, Date] {
  const today = localDateOf(timeZone, now);
  const startOf = (d: LocalDate) => startOfLocalDate(timeZone, d);
  const lastDays = (n: number): [Date, Date] => [startOf(addDays(today, 1 - n)), now];
  switch (preset) {
    case "today":
      return [startOf(today), now];
    case "yesterday":
      return [startOf(addDays(today, -1)), startOf(today)];
    case "last_7_days":
      return lastDays(7);
    case "last_30_days":
      return lastDays(30);
    case "last_90_days":
      return lastDays(90);
    case "last_365_days":
      return lastDays(365);
    case "month_to_date":
      return [startOf({ ...today, day: 1 }), now];
    case "year_to_date":
      return [startOf({ year: today.year, month: 1, day: 1 }), now];
  }
}

/**
 * Validates the query string. Days are cut at the brand's midnight in `timezone` (default UTC); presets end
 * now and include today. `start`/`end` are local dates (both inclusive) or ISO 8601 times with an offset.
 */
export function parseAnalyticsQuery(
  params: Record<string, string>,
  now: Date,
): { ok: true; query: AnalyticsQuery } | { ok: false; error: InvalidParameter } {
  const fail = (parameter: string, message: string) => ({
    ok: false as const,
    error: { parameter, message },
  });
  for (const name of Object.keys(params)) {
    if (!(knownParameters as readonly string[]).includes(name)) {
      return fail(name, `Unknown parameter ${name.slice(0, 40)}. Known: ${knownParameters.join(", ")}.`);
    }
  }
  const dimension = params.group_by ?? "partner";
  if (!(analyticsDimensions as readonly string[]).includes(dimension)) {
    return fail("group_by", `group_by must be one of: ${analyticsDimensions.join(", ")}.`);
  }
  const timeZone = params.timezone ?? "UTC";
  if (!isTimeZone(timeZone)) {
    return fail("timezone", "timezone must be an IANA time zone name, for example Europe/Paris.");
  }
  const limitText = params.limit ?? "20";
  const limit = /^\d{1,3}$/.test(limitText) ? Number(limitText) : Number.NaN;
  if (!(limit >= 1 && limit <= maxLimit)) {
    return fail("limit", `limit must be a whole number from 1 to ${maxLimit}.`);
  }
  const hasStart = params.start !== undefined;
  const hasEnd = params.end !== undefined;
  if (params.interval !== undefined && (hasStart || hasEnd)) {
    return fail("interval", "Send either interval or start and end, not both.");
  }
  if (hasStart !== hasEnd) {
    return fail(hasStart ? "end" : "start", "start and end must be sent together.");
  }
  let interval: IntervalPreset | null = null;
  let from: Date;
  let to: Date;
  if (hasStart) {
    const start = parseBound(params.start as string, timeZone, false);
    if (!start) return fail("start", "start must be a date (YYYY-MM-DD) or an ISO 8601 time with an offset.");
    const end = parseBound(params.end as string, timeZone, true);
    if (!end) return fail("end", "end must be a date (YYYY-MM-DD) or an ISO 8601 time with an offset.");
    if (end.getTime() <= start.getTime()) return fail("end", "end must be after start.");
    if (end.getTime() - start.getTime() > maxRangeDays * 86_400_000) {
      return fail("end", `The range must be at most ${maxRangeDays} days.`);
    }
    from = start;
    to = end;
  } else {
    const preset = params.interval ?? "last_30_days";
    if (!(intervalPresets as readonly string[]).includes(preset)) {
      return fail("interval", `interval must be one of: ${intervalPresets.join(", ")}.`);
    }
    interval = preset as IntervalPreset;
    [from, to] = presetRange(interval, timeZone, now);
  }
  return {
    ok: true,
    query: { dimension: dimension as AnalyticsDimension, timeZone, interval, from, to, limit },
  };
}
