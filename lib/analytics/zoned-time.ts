/**
 * Calendar arithmetic in an IANA time zone with `Intl` only (workerd has the full time-zone database): the
 * brand's days start at its own midnight, whatever the offset (Asia/Kolkata is UTC+05:30) or DST.
 */
export interface LocalDate {
  year: number;
  month: number; // 1-12
  day: number;
}

const formatters = new Map<string, Intl.DateTimeFormat>();

function formatterFor(timeZone: string): Intl.DateTimeFormat {
  let formatter = formatters.get(timeZone);
  if (!formatter) {
    formatter = new Intl.DateTimeFormat("en-US", {
      timeZone,
      hourCycle: "h23",
      year: "numeric",
      month: "2-digit",
      day: "2-digit",
      hour: "2-digit",
      minute: "2-digit",
      second: "2-digit",
    });
    formatters.set(timeZone, formatter);
  }
  return formatter;
}

/** True when `Intl` knows the zone. */
export function isTimeZone(name: string): boolean {
  if (!name || name.length > 64) return false;
  try {
    formatterFor(name);
    return true;
  } catch {
    return false;
  }
}

function localParts(timeZone: string, instant: Date) {
  const parts: Record<string, number> = {};
  for (const part of formatterFor(timeZone).formatToParts(instant)) {
    if (part.type !== "literal") parts[part.type] = Number(part.value);
  }
  return parts as { year: number; month: number; day: number; hour: number; minute: number; second: number };
}

/** The zone's offset from UTC at `instant`, in milliseconds. */
function offsetMs(timeZone: string, instant: Date): number {
  const p = localParts(timeZone, instant);
  const asUtc = Date.UTC(p.year, p.month - 1, p.day, p.hour, p.minute, p.second);
  return asUtc - Math.floor(instant.getTime() / 1000) * 1000;
}

export function localDateOf(timeZone: string, instant: Date): LocalDate {
  const p = localParts(timeZone, instant);
  return { year: p.year, month: p.month, day: p.day };
}

/** Calendar arithmetic on a local date (no zone involved). */
export function addDays(date: LocalDate, days: number): LocalDate {
  const d = new Date(Date.UTC(date.year, date.month - 1, date.day + days));
  return { year: d.getUTCFullYear(), month: d.getUTCMonth() + 1, day: d.getUTCDate() };
}

/**
 * The instant the local date begins in the zone. Where midnight does not exist (a DST gap at midnight), the
 * first instant of that day.
 */
export function startOfLocalDate(timeZone: string, date: LocalDate): Date {
  const wall = Date.UTC(date.year, date.month - 1, date.day);
  let guess = wall - offsetMs(timeZone, new Date(wall));
  // Re-check with the offset in force at the guess (they differ when a transition lies in between).
  guess = wall - offsetMs(timeZone, new Date(guess));
  const got = localDateOf(timeZone, new Date(guess));
  if (got.year !== date.year || got.month !== date.month || got.day !== date.day) {
    // In a gap: step forward an hour at a time to the day's first existing instant.
    for (let i = 1; i <= 3; i++) {
      const later = new Date(guess + i * 3_600_000);
      const d = localDateOf(timeZone, later);
      if (d.day === date.day) return later;
    }
  }
  return new Date(guess);
}
