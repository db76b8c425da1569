import { describe, expect, it } from "vitest";
import { tileRange } from "../../lib/analytics/tiling.ts";
import { startOfLocalDate } from "../../lib/analytics/zoned-time.ts";

const t = (iso: string) => new Date(iso);
const view = (segments: ReturnType<typeof tileRange>) =>
  segments.map((s) => `${s.source} ${s.from.toISOString()} ${s.to.toISOString()}`);

describe("tileRange: exact cover of a range with the coarsest rollups available", () => {
  const reach = {
    hoursUntil: t("2026-11-23T15:00:00Z"),
    daysUntil: t("2026-11-23T00:00:00Z"),
    monthsUntil: t("2026-11-01T00:00:00Z"),
  };

  it("a year in Asia/Kolkata: raw half hour, hours, days, months, days, hours, raw tail", () => {
    expect(view(tileRange(t("2025-11-22T18:30:00Z"), t("2026-11-23T15:42:10Z"), reach))).toEqual([
      "raw 2025-11-22T18:30:00.000Z 2025-11-22T19:00:00.000Z",
      "hour 2025-11-22T19:00:00.000Z 2025-11-23T00:00:00.000Z",
      "day 2025-11-23T00:00:00.000Z 2025-12-01T00:00:00.000Z",
      "month 2025-12-01T00:00:00.000Z 2026-11-01T00:00:00.000Z",
      "day 2026-11-01T00:00:00.000Z 2026-11-23T00:00:00.000Z",
      "hour 2026-11-23T00:00:00.000Z 2026-11-23T15:00:00.000Z",
      "raw 2026-11-23T15:00:00.000Z 2026-11-23T15:42:10.000Z",
    ]);
  });

  it("with the partial rows written: the month and the day under way are one bucket each", () => {
    const withPartials = { ...reach, partialsUntil: reach.hoursUntil };
    const segments = tileRange(t("2025-11-22T18:30:00Z"), t("2026-11-23T15:42:10Z"), withPartials);
    expect(view(segments)).toEqual([
      "raw 2025-11-22T18:30:00.000Z 2025-11-22T19:00:00.000Z",
      "hour 2025-11-22T19:00:00.000Z 2025-11-23T00:00:00.000Z",
      "day 2025-11-23T00:00:00.000Z 2025-12-01T00:00:00.000Z",
      "month 2025-12-01T00:00:00.000Z 2026-11-01T00:00:00.000Z",
      "month_partial 2026-11-01T00:00:00.000Z 2026-11-23T00:00:00.000Z",
      "day_partial 2026-11-23T00:00:00.000Z 2026-11-23T15:00:00.000Z",
      "raw 2026-11-23T15:00:00.000Z 2026-11-23T15:42:10.000Z",
    ]);
    expect(segments.filter((s) => s.key).map((s) => s.key?.toISOString())).toEqual([
      "2026-11-23T15:00:00.000Z",
      "2026-11-23T15:00:00.000Z",
    ]);
    // A week: whole days, then today's partial (the month's partial starts before the range).
    expect(view(tileRange(t("2026-11-17T00:00:00Z"), t("2026-11-23T15:42:10Z"), withPartials))).toEqual([
      "day 2026-11-17T00:00:00.000Z 2026-11-23T00:00:00.000Z",
      "day_partial 2026-11-23T00:00:00.000Z 2026-11-23T15:00:00.000Z",
      "raw 2026-11-23T15:00:00.000Z 2026-11-23T15:42:10.000Z",
    ]);
    // A range ending inside the day under way cannot use its partial; nor a set written at another hour.
    expect(view(tileRange(t("2026-11-22T00:00:00Z"), t("2026-11-23T10:00:00Z"), withPartials))).toEqual([
      "day 2026-11-22T00:00:00.000Z 2026-11-23T00:00:00.000Z",
      "hour 2026-11-23T00:00:00.000Z 2026-11-23T10:00:00.000Z",
    ]);
    const stale = { ...reach, partialsUntil: t("2026-11-23T14:00:00Z") };
    expect(view(tileRange(t("2026-11-22T00:00:00Z"), t("2026-11-23T15:00:00Z"), stale))).toEqual([
      "day 2026-11-22T00:00:00.000Z 2026-11-23T00:00:00.000Z",
      "hour 2026-11-23T00:00:00.000Z 2026-11-23T15:00:00.000Z",
    ]);
  });

  it("with the hour under way written: one more bucket, and only the last minutes raw", () => {
    const withTail = {
      ...reach,
      partialsUntil: reach.hoursUntil,
      tailFrom: reach.hoursUntil,
      tailUntil: t("2026-11-23T15:40:00Z"),
    };
    const segments = tileRange(t("2026-11-17T00:00:00Z"), t("2026-11-23T15:42:10Z"), withTail);
    expect(view(segments)).toEqual([
      "day 2026-11-17T00:00:00.000Z 2026-11-23T00:00:00.000Z",
      "day_partial 2026-11-23T00:00:00.000Z 2026-11-23T15:00:00.000Z",
      "hour_partial 2026-11-23T15:00:00.000Z 2026-11-23T15:40:00.000Z",
      "raw 2026-11-23T15:40:00.000Z 2026-11-23T15:42:10.000Z",
    ]);
    expect(segments[2]?.key?.toISOString()).toBe("2026-11-23T15:40:00.000Z");
    // A range ending before the set's end cannot use it; nor a set that starts at another hour.
    expect(view(tileRange(t("2026-11-23T14:00:00Z"), t("2026-11-23T15:30:00Z"), withTail))).toEqual([
      "hour 2026-11-23T14:00:00.000Z 2026-11-23T15:00:00.000Z",
      "raw 2026-11-23T15:00:00.000Z 2026-11-23T15:30:00.000Z",
    ]);
    const stale = { ...withTail, tailFrom: t("2026-11-23T14:00:00Z") };
    expect(view(tileRange(t("2026-11-23T14:00:00Z"), t("2026-11-23T15:42:10Z"), stale))).toEqual([
      "hour 2026-11-23T14:00:00.000Z 2026-11-23T15:00:00.000Z",
      "raw 2026-11-23T15:00:00.000Z 2026-11-23T15:42:10.000Z",
    ]);
  });

  it("with half hours: a half-hour offset's day starts with a half-hourly bucket, a quarter-hour offset's after a raw quarter", () => {
    const withHalves = { ...reach, halfHoursFrom: t("2025-01-01T00:00:00Z") };
    // Asia/Kolkata (+05:30): from its midnight, then to an end at its midnight again.
    expect(view(tileRange(t("2026-11-01T18:30:00Z"), t("2026-11-20T18:30:00Z"), withHalves))).toEqual([
      "half_hour 2026-11-01T18:30:00.000Z 2026-11-01T19:00:00.000Z",
      "hour 2026-11-01T19:00:00.000Z 2026-11-02T00:00:00.000Z",
      "day 2026-11-02T00:00:00.000Z 2026-11-20T00:00:00.000Z",
      "hour 2026-11-20T00:00:00.000Z 2026-11-20T18:00:00.000Z",
      "half_hour 2026-11-20T18:00:00.000Z 2026-11-20T18:30:00.000Z",
    ]);
    // Asia/Kathmandu (+05:45): its midnight is 18:15 UTC, a raw quarter hour then the half-hourly bucket.
    expect(view(tileRange(t("2026-11-01T18:15:00Z"), t("2026-11-02T01:00:00Z"), withHalves))).toEqual([
      "raw 2026-11-01T18:15:00.000Z 2026-11-01T18:30:00.000Z",
      "half_hour 2026-11-01T18:30:00.000Z 2026-11-01T19:00:00.000Z",
      "hour 2026-11-01T19:00:00.000Z 2026-11-02T01:00:00.000Z",
    ]);
    // Not before half_hours_from (a program rolled up before the half hours existed), nor past hours_until.
    const since = { ...reach, halfHoursFrom: t("2026-11-10T00:00:00Z") };
    expect(view(tileRange(t("2026-11-01T18:30:00Z"), t("2026-11-01T20:00:00Z"), since))).toEqual([
      "raw 2026-11-01T18:30:00.000Z 2026-11-01T19:00:00.000Z",
      "hour 2026-11-01T19:00:00.000Z 2026-11-01T20:00:00.000Z",
    ]);
    expect(view(tileRange(t("2026-11-23T14:00:00Z"), t("2026-11-23T15:30:00Z"), withHalves))).toEqual([
      "hour 2026-11-23T14:00:00.000Z 2026-11-23T15:00:00.000Z",
      "raw 2026-11-23T15:00:00.000Z 2026-11-23T15:30:00.000Z",
    ]);
  });

  it("nothing rolled up yet: one raw segment", () => {
    const none = { hoursUntil: null, daysUntil: null, monthsUntil: null };
    expect(view(tileRange(t("2026-01-01T00:00:00Z"), t("2026-03-01T00:00:00Z"), none))).toEqual([
      "raw 2026-01-01T00:00:00.000Z 2026-03-01T00:00:00.000Z",
    ]);
  });

  it("a range inside one hour is raw", () => {
    expect(view(tileRange(t("2026-01-01T10:05:00Z"), t("2026-01-01T10:55:00Z"), reach))).toEqual([
      "raw 2026-01-01T10:05:00.000Z 2026-01-01T10:55:00.000Z",
    ]);
  });
});

describe("startOfLocalDate", () => {
  it("midnight in zones with whole, half-hour and DST offsets", () => {
    expect(startOfLocalDate("Asia/Kolkata", { year: 2026, month: 3, day: 1 }).toISOString()).toBe(
      "2026-02-28T18:30:00.000Z",
    );
    expect(startOfLocalDate("Europe/Paris", { year: 2026, month: 7, day: 1 }).toISOString()).toBe(
      "2026-06-30T22:00:00.000Z",
    );
    expect(startOfLocalDate("America/New_York", { year: 2026, month: 3, day: 8 }).toISOString()).toBe(
      "2026-03-08T05:00:00.000Z",
    );
    expect(startOfLocalDate("America/New_York", { year: 2026, month: 3, day: 9 }).toISOString()).toBe(
      "2026-03-09T04:00:00.000Z",
    );
    // Santiago skips midnight when DST starts (2026-09-06): the day starts at 01:00 local.
    expect(startOfLocalDate("America/Santiago", { year: 2026, month: 9, day: 6 }).toISOString()).toBe(
      "2026-09-06T04:00:00.000Z",
    );
  });
});
