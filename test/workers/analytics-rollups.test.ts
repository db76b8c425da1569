import { eq, inArray, sql } from "drizzle-orm";
import { beforeAll, describe, expect, it } from "vitest";
import { parseAnalyticsQuery } from "../../lib/analytics/analytics-request.ts";
import { readKeyAndReach } from "../../lib/analytics/analytics-store.ts";
import { readAnalytics } from "../../lib/analytics/read-analytics.ts";
import { rebuildRollups, rollUpAll, rollUpAnalytics, rollupTarget } from "../../lib/analytics/rollups.ts";
import { sha256Hex } from "../../lib/auth/api-keys.ts";
import { analyticsRollupProgress, referralLinks, refunds, saleEvents } from "../../schema/index.ts";
import { type ExpectedFact, expectedBySource, insertAnalyticsDataSet } from "./analytics-fixture.ts";
import { createProgram, db, type ProgramFixture, unique } from "./harness.ts";
import { bearer } from "./lead-helpers.ts";
import { getJson } from "./readiness-helpers.ts";

const path = "/api/v1/programs/me/analytics/sources";
const hour = 3_600_000;
const day = 24 * hour;
const dimensions = [
  "partner",
  "link",
  "referrer_domain",
  "utm_source",
  "utm_medium",
  "utm_campaign",
  "landing_page",
] as const;

/** Kolkata is UTC+05:30 all year: its midnight is 18:30 UTC the day before. */
const kolkataMidnight = (d: Date) =>
  new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate()) - 5.5 * hour);
const date = (d: Date) => d.toISOString().slice(0, 10);

const now = new Date();
const from = new Date(Math.floor((now.getTime() - 70 * day) / hour) * hour + 17 * 60_000);
const to = new Date(now.getTime() - 5 * 60_000);
const k0 = kolkataMidnight(new Date(now.getTime() - 40 * day));
const k1 = new Date(k0.getTime() + 33 * day);

/** Every query the comparison asks, rollups or not: each dimension, presets, time zones, odd instants. */
const queries: Record<string, string>[] = [
  ...dimensions.map((group_by) => ({ group_by, interval: "last_90_days", limit: "100" })),
  { group_by: "utm_source", interval: "last_7_days", timezone: "Asia/Kolkata", limit: "100" },
  { group_by: "partner", interval: "last_30_days", timezone: "America/New_York", limit: "100" },
  { group_by: "landing_page", interval: "month_to_date", timezone: "Asia/Kolkata", limit: "100" },
  {
    group_by: "referrer_domain",
    timezone: "Asia/Kolkata",
    start: date(new Date(k0.getTime() + 5.5 * hour)),
    end: date(new Date(k1.getTime() + 5.5 * hour - day)),
    limit: "100",
  },
  {
    group_by: "utm_campaign",
    start: new Date(from.getTime() + 3 * day + 1234).toISOString(),
    end: new Date(to.getTime() - 2 * day - 777).toISOString(),
    limit: "2",
  },
];

/**
 * The use case itself, at the test's fixed `now` (presets then cover the same range every time): with the
 * reach the route reads (`rollups`), or with none, which reads every event raw.
 */
async function analytics(key: string, query: Record<string, string>, mode: "rollups" | "raw" = "rollups") {
  const { key: record, reach } = await readKeyAndReach(db, await sha256Hex(key));
  const parsed = parseAnalyticsQuery(query, now);
  if (!record || !parsed.ok) throw new Error("bad key or query");
  const none = { hoursUntil: null, daysUntil: null, monthsUntil: null };
  return readAnalytics(db, record.programId, parsed.query, mode === "raw" ? none : reach);
}

type Answer = Awaited<ReturnType<typeof analytics>>;

async function answers(key: string, mode: "rollups" | "raw" = "rollups") {
  const out: Answer[] = [];
  for (const q of queries) out.push(await analytics(key, q, mode));
  return out;
}

async function rollupRows(programId: number) {
  const result = await db.execute(sql`
    select dimension, grain, bucket_start, value, currency, clicks, leads, provisional_leads, sales,
           revenue_cents, refunds, refunded_cents, commission_cents
    from analytics_rollups where program_id = ${programId}::int
    order by dimension, grain, bucket_start, value, currency`);
  return result.rows;
}

async function progressOf(programId: number) {
  const [row] = await db
    .select()
    .from(analyticsRollupProgress)
    .where(eq(analyticsRollupProgress.programId, programId));
  return row;
}

async function dataSet(seed: number): Promise<{ p: ProgramFixture; facts: ExpectedFact[] }> {
  const p = await createProgram();
  const links = await db.select().from(referralLinks).where(inArray(referralLinks.shortLink, p.links));
  const linkIds = p.links.map((code) => links.find((l) => l.shortLink === code)?.id as number) as [
    number,
    number,
  ];
  const facts = await insertAnalyticsDataSet(p, linkIds, {
    seed,
    clicks: 500,
    from,
    to,
    boundaries: [k0, k1, new Date(Math.floor((now.getTime() - 20 * day) / day) * day), rollupTarget(now)],
  });
  return { p, facts };
}

let p: ProgramFixture;
let facts: ExpectedFact[];
let raw: Awaited<ReturnType<typeof answers>>;

beforeAll(async () => {
  ({ p, facts } = await dataSet(20261124));
  raw = await answers(p.apiKey);
});

describe("analytics rollups", () => {
  it("answers from the raw events alone match the data set's own count", async () => {
    expect(await progressOf(p.programId)).toBeUndefined();
    const k = await analytics(p.apiKey, queries[10] as Record<string, string>);
    expect(k.start).toBe(k0.toISOString());
    expect(k.end).toBe(k1.toISOString());
    const expected = expectedBySource(facts, "referrer_domain", k0, k1);
    expect(k.rows.map((r) => [r.value ?? "", r.clicks]).sort()).toEqual(
      [...expected].map(([v, e]) => [v, e.clicks]).sort(),
    );
  });

  it("rolled up: hours, days and months reach the target, and every answer is the raw one", async () => {
    const run = await rollUpAll(db, now, { programIds: [p.programId] });
    expect(run.rows).toBeGreaterThan(0);
    const progress = await progressOf(p.programId);
    const target = rollupTarget(now);
    expect(progress?.hoursUntil.toISOString()).toBe(target.toISOString());
    expect(progress?.daysUntil.toISOString()).toBe(
      new Date(Math.floor(target.getTime() / day) * day).toISOString(),
    );
    expect(progress?.monthsUntil.toISOString()).toBe(
      new Date(Date.UTC(target.getUTCFullYear(), target.getUTCMonth(), 1)).toISOString(),
    );
    const grains = new Set((await rollupRows(p.programId)).map((r) => r.grain));
    // A partial set exists only while its period is under way with something complete in it: none for the
    // day in its first hour (no complete hour yet), none for the month on its first day (no complete day).
    const hoursUntil = progress?.hoursUntil.getTime() ?? 0;
    const daysUntil = progress?.daysUntil.getTime() ?? 0;
    const monthsUntil = progress?.monthsUntil.getTime() ?? 0;
    expect([...grains].sort()).toEqual(
      [
        "day",
        ...(hoursUntil > daysUntil ? ["day_partial"] : []),
        "hour",
        "month",
        ...(daysUntil > monthsUntil ? ["month_partial"] : []),
      ].sort(),
    );
    // The partial rows of the day and the month under way are keyed by, and marked written at, hours_until.
    expect(progress?.partialsUntil?.toISOString()).toBe(target.toISOString());
    expect(await answers(p.apiKey)).toEqual(raw);
    expect(await answers(p.apiKey, "raw")).toEqual(raw);
    // Nothing left: a second run writes nothing.
    expect(await rollUpAnalytics(db, now, { programIds: [p.programId] })).toEqual({ programs: 0, rows: 0 });
  });

  it("the answers come from the rollups (a changed hourly row shows), and a rebuild restores them exactly", async () => {
    const before = await rollupRows(p.programId);
    await db.execute(sql`
      update analytics_rollups set clicks = clicks + 1000
      where program_id = ${p.programId}::int and dimension = 'partner' and grain in ('hour', 'day', 'month')
        and bucket_start >= ${new Date(now.getTime() - 60 * day).toISOString()}::timestamptz`);
    // Through the route, as a brand asks.
    const response = await getJson(
      `${path}?${new URLSearchParams({ group_by: "partner", start: from.toISOString(), end: now.toISOString() })}`,
      bearer(p.apiKey),
    );
    expect(response.status).toBe(200);
    const changed = response.body.data as Answer;
    expect(changed.totals.clicks).toBeGreaterThan((raw[0]?.totals.clicks ?? 0) + 999);
    const run = await rebuildRollups(db, now, { programIds: [p.programId] });
    expect(run.rows).toBe(before.length);
    expect(await rollupRows(p.programId)).toEqual(before);
    expect(await answers(p.apiKey)).toEqual(raw);
  });

  it("a refund of an old sale counts at its own time: in the raw tail at once, in the rollups later", async () => {
    const [sale] = await db
      .select()
      .from(saleEvents)
      .where(eq(saleEvents.programId, p.programId))
      .orderBy(saleEvents.createdAt)
      .limit(1);
    expect(sale).toBeDefined();
    if (!sale) return;
    const live = !sale.isTest;
    const at = new Date(now.getTime() - 60_000);
    await db.insert(refunds).values({
      saleId: sale.id,
      idempotencyKey: unique("late"),
      amountCents: 77,
      refundedTotalCents: 77,
      createdAt: at,
    });
    const refunded = (a: Answer | undefined) => a?.totals.money[sale.currency]?.refunded_cents ?? 0;
    const q = queries[0] as Record<string, string>;
    const plus = live ? 77 : 0;
    expect(refunded(await analytics(p.apiKey, q))).toBe(refunded(raw[0]) + plus);
    // Two hours on, the refund's hour is rolled up too; the answer is the same.
    await rollUpAll(db, new Date(now.getTime() + 2 * hour), { programIds: [p.programId] });
    const progress = await progressOf(p.programId);
    expect(progress?.hoursUntil.getTime()).toBeGreaterThan(at.getTime());
    expect(refunded(await analytics(p.apiKey, q))).toBe(refunded(raw[0]) + plus);
  });

  it("two overlapping runs never count an hour twice", async () => {
    const other = await dataSet(20261125);
    const before = await answers(other.p.apiKey);
    const runs = await Promise.all([
      rollUpAnalytics(db, now, { programIds: [other.p.programId], maxHoursPerRun: 24 * 100 }),
      rollUpAnalytics(db, now, { programIds: [other.p.programId], maxHoursPerRun: 24 * 100 }),
    ]);
    expect(runs.map((r) => r.programs).sort()).toEqual([0, 1]);
    expect(await answers(other.p.apiKey)).toEqual(before);
    const total = await analytics(other.p.apiKey, queries[0] as Record<string, string>);
    const expected = [...expectedBySource(other.facts, "partner", new Date(0), now).values()];
    expect(total.totals.clicks).toBe(expected.reduce((s, e) => s + e.clicks, 0));
  });

  it("the partial sets follow hours_until; a set older than two hours is deleted", async () => {
    const other = await dataSet(20261126);
    await rollUpAll(db, now, { programIds: [other.p.programId] });
    const keysOf = async () =>
      (await rollupRows(other.p.programId))
        .filter((r) => r.grain === "day_partial" || r.grain === "month_partial")
        .map((r) => new Date(String(r.bucket_start)).toISOString());
    const first = rollupTarget(now).toISOString();
    expect(new Set(await keysOf())).toEqual(new Set([first]));
    // An hour later: the new set and the previous one (a reader may still hold the old progress).
    await rollUpAll(db, new Date(now.getTime() + hour), { programIds: [other.p.programId] });
    const second = rollupTarget(new Date(now.getTime() + hour)).toISOString();
    expect(new Set(await keysOf())).toEqual(new Set([first, second]));
    expect((await progressOf(other.p.programId))?.partialsUntil?.toISOString()).toBe(second);
    // Three hours after the first: the first set (older than two hours) is gone; the one two hours old stays.
    await rollUpAll(db, new Date(now.getTime() + 3 * hour), { programIds: [other.p.programId] });
    const fourth = rollupTarget(new Date(now.getTime() + 3 * hour)).toISOString();
    expect(new Set(await keysOf())).toEqual(new Set([second, fourth]));
  });

  it("a program without events gets no progress row; the job leaves other programs alone", async () => {
    const empty = await createProgram();
    expect(await rollUpAnalytics(db, now, { programIds: [empty.programId] })).toEqual({
      programs: 0,
      rows: 0,
    });
    expect(await progressOf(empty.programId)).toBeUndefined();
  });
});
