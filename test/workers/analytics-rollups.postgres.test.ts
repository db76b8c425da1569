import { inArray } from "drizzle-orm";
import { describe, expect, inject, it } from "vitest";
import { parseAnalyticsQuery } from "../../lib/analytics/analytics-request.ts";
import { readKeyAndReach } from "../../lib/analytics/analytics-store.ts";
import { readAnalytics } from "../../lib/analytics/read-analytics.ts";
import { rollUpAnalytics } from "../../lib/analytics/rollups.ts";
import { sha256Hex } from "../../lib/auth/api-keys.ts";
import { referralLinks } from "../../schema/index.ts";
import { insertAnalyticsDataSet } from "./analytics-fixture.ts";
import { createProgram, db } from "./harness.ts";

const hour = 3_600_000;
const day = 24 * hour;

/**
 * Runs only with DATABASE_URL (a real multi-connection PostgreSQL; PGlite is one session and would serialise
 * the runs). Overlapping runs of the rollup job: the advisory lock makes them take turns, the later ones find
 * the hours done, and nothing is counted twice.
 */
describe("overlapping rollup runs (PostgreSQL)", () => {
  it("six at once: one rolls the hours up, five find nothing left; answers equal the raw ones", async () => {
    expect(inject("databaseBackend")).toBe("postgres");
    const now = new Date();
    const p = await createProgram();
    const links = await db.select().from(referralLinks).where(inArray(referralLinks.shortLink, p.links));
    const linkIds = p.links.map((code) => links.find((l) => l.shortLink === code)?.id as number) as [
      number,
      number,
    ];
    await insertAnalyticsDataSet(p, linkIds, {
      seed: 20261126,
      clicks: 300,
      from: new Date(now.getTime() - 20 * day),
      to: new Date(now.getTime() - 5 * 60_000),
      boundaries: [],
    });
    const ask = async (query: Record<string, string>, raw: boolean) => {
      const { key, reach } = await readKeyAndReach(db, await sha256Hex(p.apiKey));
      const parsed = parseAnalyticsQuery(query, now);
      if (!key || !parsed.ok) throw new Error("bad key or query");
      const none = { hoursUntil: null, daysUntil: null, monthsUntil: null };
      return readAnalytics(db, key.programId, parsed.query, raw ? none : reach);
    };
    const queries: Record<string, string>[] = [
      { group_by: "partner", interval: "last_30_days" },
      { group_by: "utm_source", interval: "last_7_days", timezone: "Asia/Kolkata" },
    ];
    const runs = await Promise.all(
      Array.from({ length: 6 }, () =>
        rollUpAnalytics(db, now, { programIds: [p.programId], maxHoursPerRun: 24 * 40 }),
      ),
    );
    expect(runs.map((r) => r.programs).sort()).toEqual([0, 0, 0, 0, 0, 1]);
    for (const q of queries) expect(await ask(q, false)).toEqual(await ask(q, true));
  });
});
