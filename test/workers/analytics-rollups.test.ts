import { eq, inArray, sql } from "drizzle-orm";
import { beforeAll, describe, expect, it } from "vitest";
import { parseAnalyticsQuery } from "../../lib/analytics/analytics-request.ts";
import { readKeyAndReach } from "../../lib/analytics/analytics-store.ts";
import { measureColumns } from "../../lib/analytics/event-facts.ts";
import { readAnalytics } from "../../lib/analytics/read-analytics.ts";
import {
  rebuildRollups,
  rollUpAll,
  rollUpAnalytics,
  rollupTarget,
  tailTarget,
} from "../../lib/analytics/rollups.ts";
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

/** A program with the generated data set; `shape` changes its size, start and boundary instants. */
async function dataSet(
  seed: number,
  shape: { clicks?: number; from?: Date; boundaries?: Date[] } = {},
): Promise<{ p: ProgramFixture; facts: ExpectedFact[] }> {
  const p = await createProgram();
  const links = await db.select().from(referralLinks).where(inArray(referralLinks.shortLink, p.links));
  const linkIds = p.links.map((code) => links.find((l) => l.shortLink === code)?.id as number) as [
    number,
    number,
  ];
  const facts = await insertAnalyticsDataSet(p, linkIds, {
    seed,
    clicks: shape.clicks ?? 500,
    from: shape.from ?? from,
    to,
    boundaries: shape.boundaries ?? [
      k0,
      k1,
      new Date(Math.floor((now.getTime() - 20 * day) / day) * day),
      rollupTarget(now),
    ],
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
    // The hour under way is summed up to the tail target when a live event falls in it.
    const tailHasEvents = facts.some(
      (f) => f.live && f.at.getTime() >= target.getTime() && f.at.getTime() < tailTarget(now).getTime(),
    );
    // A partial set exists only while its period is under way with something complete in it: none for the
    // day in its first hour (no complete hour yet), none for the month on its first day (no complete day).
    const hoursUntil = progress?.hoursUntil.getTime() ?? 0;
    const daysUntil = progress?.daysUntil.getTime() ?? 0;
    const monthsUntil = progress?.monthsUntil.getTime() ?? 0;
    expect([...grains].sort()).toEqual(
      [
        "day",
        ...(hoursUntil > daysUntil ? ["day_partial"] : []),
        "half_hour",
        "hour",
        ...(tailHasEvents ? ["hour_partial"] : []),
        "month",
        ...(daysUntil > monthsUntil ? ["month_partial"] : []),
      ].sort(),
    );
    // The partial rows of the day and the month under way are keyed by, and marked written at, hours_until.
    expect(progress?.partialsUntil?.toISOString()).toBe(target.toISOString());
    // Half hours from the program's first hour; each hour's row is the sum of its two halves' rows.
    const first = Math.min(...facts.map((f) => f.at.getTime()));
    expect(progress?.halfHoursFrom?.toISOString()).toBe(
      new Date(Math.floor(first / hour) * hour).toISOString(),
    );
    const unequal = await db.execute(sql`
      select count(*)::int as n from (
        select dimension, date_trunc('hour', bucket_start, 'UTC') as h, value, currency,
               ${sql.raw(measureColumns.map((m) => `sum(case when grain = 'hour' then ${m} else -${m} end) as ${m}`).join(", "))},
               count(*) filter (where grain = 'hour') as hours,
               count(*) filter (where grain = 'half_hour') as halves
        from analytics_rollups
        where program_id = ${p.programId}::int and grain in ('hour', 'half_hour')
        group by 1, 2, 3, 4) x
      where ${sql.raw(measureColumns.map((m) => `${m} <> 0`).join(" or "))} or hours <> 1 or halves = 0`);
    expect(unequal.rows[0]?.n).toBe(0);
    expect(await answers(p.apiKey)).toEqual(raw);
    expect(await answers(p.apiKey, "raw")).toEqual(raw);
    // Nothing left: a second run writes nothing.
    expect(await rollUpAnalytics(db, now, { programIds: [p.programId] })).toEqual({ programs: 0, rows: 0 });
  });

  it("the answers come from the rollups (a changed hourly row shows), and a rebuild restores them exactly", async () => {
    const before = await rollupRows(p.programId);
    // Every row the range below can read (a row is read only when its whole period is inside the range). A
    // fixed 60 days before `now` missed every row the answer read on some days (found on a November 30th,
    // when the month row it read began minutes before that cutoff), and the test failed by the calendar.
    await db.execute(sql`
      update analytics_rollups set clicks = clicks + 1000
      where program_id = ${p.programId}::int and dimension = 'partner' and grain in ('hour', 'day', 'month')
        and bucket_start >= ${from.toISOString()}::timestamptz`);
    // Through the route, as a brand asks.
    const response = await getJson(
      `${path}?${new URLSearchParams({ group_by: "partner", start: from.toISOString(), end: now.toISOString() })}`,
      bearer(p.apiKey),
    );
    expect(response.status).toBe(200);
    const changed = response.body.data as Answer;
    expect(changed.totals.clicks).toBeGreaterThan((raw[0]?.totals.clicks ?? 0) + 999);
    // A Kolkata day starts at half past a UTC hour: its first half hour is read from the half-hourly row.
    const kolkata = queries[10] as Record<string, string>;
    const beforeHalf = (await analytics(p.apiKey, kolkata)).totals.clicks;
    await db.execute(sql`
      update analytics_rollups set clicks = clicks + 1000
      where program_id = ${p.programId}::int and dimension = 'referrer_domain' and grain = 'half_hour'
        and bucket_start = ${k0.toISOString()}::timestamptz and currency = '' and value = (
          select min(value) from analytics_rollups
          where program_id = ${p.programId}::int and dimension = 'referrer_domain' and grain = 'half_hour'
            and bucket_start = ${k0.toISOString()}::timestamptz and currency = '')`);
    const halfChanged = await analytics(p.apiKey, kolkata);
    expect(halfChanged.totals.clicks).toBe(beforeHalf + 1000);
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

  it("a program rolled up before half hours existed gets them from the next hour the job rolls", async () => {
    const other = await dataSet(20261127);
    await rollUpAll(db, new Date(now.getTime() - 3 * hour), { programIds: [other.p.programId] });
    // As migration 0024 leaves such a program: no half-hour rows, half_hours_from null.
    await db.execute(
      sql`delete from analytics_rollups where program_id = ${other.p.programId}::int and grain = 'half_hour'`,
    );
    await db.execute(
      sql`update analytics_rollup_progress set half_hours_from = null where program_id = ${other.p.programId}::int`,
    );
    const before = await progressOf(other.p.programId);
    const fromRaw = await answers(other.p.apiKey, "raw");
    expect(await answers(other.p.apiKey)).toEqual(fromRaw);
    await rollUpAll(db, now, { programIds: [other.p.programId] });
    const after = await progressOf(other.p.programId);
    expect(after?.halfHoursFrom?.toISOString()).toBe(before?.hoursUntil.toISOString());
    const halves = (await rollupRows(other.p.programId)).filter((r) => r.grain === "half_hour");
    expect(halves.length).toBeGreaterThan(0);
    const first = Math.min(...halves.map((r) => new Date(String(r.bucket_start)).getTime()));
    expect(first).toBeGreaterThanOrEqual(before?.hoursUntil.getTime() ?? Number.POSITIVE_INFINITY);
    // The Kolkata queries' older half hours are read raw: every answer is still the raw one.
    expect(await answers(other.p.apiKey)).toEqual(fromRaw);
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
    // Its own clock, mid-month and mid-day inside the data set's range: a set holds the month's days before the
    // day (and the day's hours), so it is never empty, as it would be three hours after the wall clock near a
    // month's end (the month rolled up whole, no event after the data set's end).
    const month = new Date(now.getTime() - 30 * day);
    const at = (hours: number) =>
      new Date(Date.UTC(month.getUTCFullYear(), month.getUTCMonth(), 15, 12, 20) + hours * hour);
    await rollUpAll(db, at(0), { programIds: [other.p.programId] });
    const keysOf = async () =>
      (await rollupRows(other.p.programId))
        .filter((r) => r.grain === "day_partial" || r.grain === "month_partial")
        .map((r) => new Date(String(r.bucket_start)).toISOString());
    const first = rollupTarget(at(0)).toISOString();
    expect(new Set(await keysOf())).toEqual(new Set([first]));
    // An hour later: the new set and the previous one (a reader may still hold the old progress).
    await rollUpAll(db, at(1), { programIds: [other.p.programId] });
    const second = rollupTarget(at(1)).toISOString();
    expect(new Set(await keysOf())).toEqual(new Set([first, second]));
    expect((await progressOf(other.p.programId))?.partialsUntil?.toISOString()).toBe(second);
    // Three hours after the first: the first set (older than two hours) is gone; the one two hours old stays.
    await rollUpAll(db, at(3), { programIds: [other.p.programId] });
    const fourth = rollupTarget(at(3)).toISOString();
    expect(new Set(await keysOf())).toEqual(new Set([second, fourth]));
  });

  it("the hour under way: summed each minute from the previous set and the events since, read at once", async () => {
    // An hour in the past, so the test picks its minutes: H is not rolled up at H + 24 min, whose tail target
    // is H + 22 min.
    const h = new Date(rollupTarget(now).getTime() - hour);
    const at = (minutes: number) => new Date(h.getTime() + minutes * 60_000);
    const { p: q, facts: qFacts } = await dataSet(20261128, {
      clicks: 120,
      from: new Date(h.getTime() - 3 * day),
      boundaries: [at(5), at(21), at(22), at(30), at(43)],
    });
    const liveClicks = (a: number, b: number) =>
      qFacts
        .filter((f) => f.live && f.at.getTime() >= at(a).getTime() && f.at.getTime() < at(b).getTime())
        .reduce((n, f) => n + f.clicks, 0);
    const tailSets = async () => {
      const rows = (await rollupRows(q.programId)).filter((r) => r.grain === "hour_partial");
      const sets = new Map<string, number>();
      for (const r of rows.filter((r) => r.dimension === "partner")) {
        const key = new Date(String(r.bucket_start)).toISOString();
        sets.set(key, (sets.get(key) ?? 0) + Number(r.clicks));
      }
      return sets;
    };
    /** Analytics by partner from three days before H to `end`, through the rollups or raw. */
    const answer = async (end: Date, mode: "rollups" | "raw" = "rollups") => {
      const { key: record, reach } = await readKeyAndReach(db, await sha256Hex(q.apiKey));
      const parsed = parseAnalyticsQuery(
        { group_by: "partner", start: new Date(h.getTime() - 2 * day).toISOString(), end: end.toISOString() },
        end,
      );
      if (!record || !parsed.ok) throw new Error("bad key or query");
      const none = { hoursUntil: null, daysUntil: null, monthsUntil: null };
      return readAnalytics(db, record.programId, parsed.query, mode === "raw" ? none : reach);
    };

    // At H + 24 min: the hours reach H, and [H, H + 22 min) is one set keyed by its end.
    await rollUpAll(db, at(24), { programIds: [q.programId] });
    let progress = await progressOf(q.programId);
    expect(progress?.hoursUntil.toISOString()).toBe(h.toISOString());
    expect(progress?.tailFrom?.toISOString()).toBe(h.toISOString());
    expect(progress?.tailUntil?.toISOString()).toBe(at(22).toISOString());
    expect(liveClicks(0, 22)).toBeGreaterThan(0);
    expect(await tailSets()).toEqual(new Map([[at(22).toISOString(), liveClicks(0, 22)]]));
    expect(await answer(at(24))).toEqual(await answer(at(24), "raw"));
    // The answer reads the set: a changed row shows.
    const bump = (delta: number) =>
      db.execute(sql`
        update analytics_rollups set clicks = clicks + ${delta}::int
        where program_id = ${q.programId}::int and grain = 'hour_partial' and dimension = 'partner'
          and bucket_start = ${at(22).toISOString()}::timestamptz and currency = ''
          and value = (select min(value) from analytics_rollups where program_id = ${q.programId}::int
                         and grain = 'hour_partial' and dimension = 'partner' and currency = ''
                         and bucket_start = ${at(22).toISOString()}::timestamptz)`);
    await bump(1000);
    expect((await answer(at(24))).totals.clicks).toBe((await answer(at(24), "raw")).totals.clicks + 1000);

    // At H + 45 min: the new set is the previous one (still bumped: it is carried, not re-read) plus the
    // events of [H + 22 min, H + 43 min); the previous set, older than ten minutes, is deleted.
    await rollUpAll(db, at(45), { programIds: [q.programId] });
    expect(await tailSets()).toEqual(new Map([[at(43).toISOString(), liveClicks(0, 43) + 1000]]));
    // A rebuild sums the set from the raw events again.
    await rebuildRollups(db, at(45), { programIds: [q.programId] });
    expect(await tailSets()).toEqual(new Map([[at(43).toISOString(), liveClicks(0, 43)]]));
    // A minute later, both sets are kept (a reader may hold the progress of the one before).
    await rollUpAll(db, at(46), { programIds: [q.programId] });
    expect(await tailSets()).toEqual(
      new Map([
        [at(43).toISOString(), liveClicks(0, 43)],
        [at(44).toISOString(), liveClicks(0, 44)],
      ]),
    );
    expect(await answer(at(46))).toEqual(await answer(at(46), "raw"));

    // The next hour: H is rolled up, and the set starts again at H + 1 h from the raw events.
    await rollUpAll(db, at(70), { programIds: [q.programId] });
    progress = await progressOf(q.programId);
    expect(progress?.hoursUntil.toISOString()).toBe(at(60).toISOString());
    expect(progress?.tailFrom?.toISOString()).toBe(at(60).toISOString());
    expect(progress?.tailUntil?.toISOString()).toBe(at(68).toISOString());
    expect((await tailSets()).get(at(68).toISOString()) ?? 0).toBe(liveClicks(60, 68));
    expect(await answer(at(70))).toEqual(await answer(at(70), "raw"));
  });

  it("a new program's first hour under way is summed at once, before any hour of it is over", async () => {
    const h = new Date(rollupTarget(now).getTime() - 2 * hour);
    const at = (minutes: number) => new Date(h.getTime() + minutes * 60_000);
    const { p: q } = await dataSet(20261129, { clicks: 60, from: at(1), boundaries: [at(5), at(20)] });
    await rollUpAll(db, at(30), { programIds: [q.programId] });
    const progress = await progressOf(q.programId);
    expect(progress?.hoursUntil.toISOString()).toBe(h.toISOString());
    expect(progress?.tailFrom?.toISOString()).toBe(h.toISOString());
    expect(progress?.tailUntil?.toISOString()).toBe(at(28).toISOString());
    const { key: record, reach } = await readKeyAndReach(db, await sha256Hex(q.apiKey));
    const parsed = parseAnalyticsQuery(
      { group_by: "utm_source", start: h.toISOString(), end: at(30).toISOString() },
      at(30),
    );
    if (!record || !parsed.ok) throw new Error("bad key or query");
    const none = { hoursUntil: null, daysUntil: null, monthsUntil: null };
    const fromRollups = await readAnalytics(db, q.programId, parsed.query, reach);
    expect(fromRollups.totals.clicks).toBeGreaterThan(0);
    expect(fromRollups).toEqual(await readAnalytics(db, q.programId, parsed.query, none));
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
