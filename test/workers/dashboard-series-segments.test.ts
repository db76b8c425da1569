import { describe, expect, it } from "vitest";
import { parseAnalyticsQuery } from "../../lib/analytics/analytics-request.ts";
import { seriesSegments } from "../../lib/dashboard/performance.ts";

function queryOf(params: Record<string, string>) {
  const parsed = parseAnalyticsQuery(params, new Date("2026-11-23T12:00:00Z"));
  if (!parsed.ok) throw new Error(parsed.error.message);
  return parsed.query;
}

describe("the performance series' tiling", () => {
  it("covers the range exactly and keeps every hourly rollup inside one local day (UTC+05:30)", () => {
    const query = queryOf({ start: "2026-11-01", end: "2026-11-03", timezone: "Asia/Kolkata" });
    const segments = seriesSegments(query, new Date("2026-12-01T00:00:00Z"));
    expect(segments[0]?.from).toEqual(query.from);
    expect(segments.at(-1)?.to).toEqual(query.to);
    for (let i = 1; i < segments.length; i++) expect(segments[i]?.from).toEqual(segments[i - 1]?.to);
    const midnights = [1, 2, 3].map((d) => Date.UTC(2026, 9, 31 + d, -5, -30));
    for (const s of segments.filter((x) => x.source === "hour")) {
      for (const m of midnights) expect(s.from.getTime() < m && m < s.to.getTime()).toBe(false);
    }
    expect(segments.some((s) => s.source === "raw")).toBe(true);
    expect(segments.some((s) => s.source === "hour")).toBe(true);
  });

  it("merges whole-hour zones into one hourly piece, and reads raw where the rollups do not reach", () => {
    const query = queryOf({ start: "2026-11-01", end: "2026-11-30", timezone: "Europe/Paris" });
    expect(seriesSegments(query, new Date("2026-12-01T00:00:00Z"))).toEqual([
      { source: "hour", from: query.from, to: query.to },
    ]);
    expect(seriesSegments(query, null)).toEqual([{ source: "raw", from: query.from, to: query.to }]);
  });

  it("falls back to raw events when a half-hour zone over a long range would need too many pieces", () => {
    const query = queryOf({ start: "2025-01-01", end: "2026-10-31", timezone: "Asia/Kolkata" });
    expect(seriesSegments(query, new Date("2026-12-01T00:00:00Z"))).toEqual([
      { source: "raw", from: query.from, to: query.to },
    ]);
  });
});
