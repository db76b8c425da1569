import { inArray } from "drizzle-orm";
import { beforeAll, describe, expect, it } from "vitest";
import { referralLinks } from "../../schema/index.ts";
import {
  type ExpectedFact,
  expectedBySource,
  type FactDims,
  insertAnalyticsDataSet,
} from "./analytics-fixture.ts";
import { createProgram, db, type ProgramFixture } from "./harness.ts";
import { bearer } from "./lead-helpers.ts";
import { getJson } from "./readiness-helpers.ts";

const path = "/api/v1/programs/me/analytics/sources";
const hour = 3_600_000;
const day = 24 * hour;

type Row = {
  source: string;
  value: string | null;
  clicks: number;
  leads: number;
  provisional_leads: number;
  sales: number;
  money: Record<string, Record<string, number | null>>;
};

/** Kolkata is UTC+05:30 all year: its midnight is 18:30 UTC the day before (computed here without Intl). */
const kolkataMidnight = (y: number, m: number, d: number) => new Date(Date.UTC(y, m - 1, d) - 5.5 * hour);

let p: ProgramFixture;
let facts: ExpectedFact[];
const now = new Date();
const from = new Date(Math.floor((now.getTime() - 40 * day) / hour) * hour + 17 * 60_000);
const to = new Date(now.getTime() - 5 * 60_000);
const boundaryDay = new Date(now.getTime() - 10 * day);
const k0 = kolkataMidnight(
  boundaryDay.getUTCFullYear(),
  boundaryDay.getUTCMonth() + 1,
  boundaryDay.getUTCDate(),
);
const k1 = new Date(k0.getTime() + 3 * day);

async function analyticsOf(key: string, query: Record<string, string>) {
  const response = await getJson(`${path}?${new URLSearchParams(query)}`, bearer(key));
  return response;
}

function compare(rows: Row[], expected: ReturnType<typeof expectedBySource>, dimension: keyof FactDims) {
  const got = new Map(rows.map((r) => [r.value ?? "", r]));
  expect([...got.keys()].sort()).toEqual([...expected.keys()].sort());
  for (const [value, e] of expected) {
    const r = got.get(value) as Row;
    expect({
      value,
      dimension,
      clicks: r.clicks,
      leads: r.leads,
      provisional: r.provisional_leads,
      sales: r.sales,
    }).toEqual({
      value,
      dimension,
      clicks: e.clicks,
      leads: e.leads,
      provisional: e.provisional_leads,
      sales: e.sales,
    });
    if (value === "") expect(r.source).toBe("(direct)");
    const money = Object.fromEntries(
      Object.entries(r.money).map(([currency, m]) => [
        currency,
        {
          sales: m.sales,
          revenue_cents: m.revenue_cents,
          refunds: m.refunds,
          refunded_cents: m.refunded_cents,
          net_revenue_cents: m.net_revenue_cents,
          commission_cents: m.commission_cents,
        },
      ]),
    );
    expect(money).toEqual(e.money);
  }
}

beforeAll(async () => {
  p = await createProgram();
  const links = await db.select().from(referralLinks).where(inArray(referralLinks.shortLink, p.links));
  const linkIds = p.links.map((code) => links.find((l) => l.shortLink === code)?.id as number) as [
    number,
    number,
  ];
  facts = await insertAnalyticsDataSet(p, linkIds, {
    seed: 20261123,
    clicks: 400,
    from,
    to,
    boundaries: [k0, k1, new Date(Math.floor(boundaryDay.getTime() / day) * day)],
  });
});

describe("GET /api/v1/programs/me/analytics/sources: exact totals", () => {
  it.each([
    "partner",
    "link",
    "referrer_domain",
    "utm_source",
    "utm_medium",
    "utm_campaign",
    "landing_page",
  ] as const)("group_by=%s over the last 90 days equals the data set's own count", async (dimension) => {
    const response = await analyticsOf(p.apiKey, {
      group_by: dimension,
      interval: "last_90_days",
      limit: "100",
    });
    expect(response.status).toBe(200);
    const data = response.body.data as { rows: Row[]; other: unknown; totals: Row };
    expect(data.other).toBeNull();
    compare(data.rows, expectedBySource(facts, dimension, new Date(0), now), dimension);
  });

  it("days cut at the brand's midnight (Asia/Kolkata), test events left out", async () => {
    const d0 = new Date(k0.getTime() + 5.5 * hour);
    const d1 = new Date(k1.getTime() + 5.5 * hour - day);
    const date = (d: Date) => d.toISOString().slice(0, 10);
    const response = await analyticsOf(p.apiKey, {
      group_by: "utm_source",
      timezone: "Asia/Kolkata",
      start: date(d0),
      end: date(d1),
      limit: "100",
    });
    expect(response.status).toBe(200);
    const data = response.body.data as { rows: Row[]; start: string; end: string };
    expect(data.start).toBe(k0.toISOString());
    expect(data.end).toBe(k1.toISOString());
    compare(data.rows, expectedBySource(facts, "utm_source", k0, k1), "utm_source");
  });

  it("ISO instants in America/New_York; a limit sums the rest into `other`", async () => {
    const a = new Date(from.getTime() + 3 * day + 1234);
    const b = new Date(to.getTime() - 2 * day - 777);
    const response = await analyticsOf(p.apiKey, {
      group_by: "referrer_domain",
      timezone: "America/New_York",
      start: a.toISOString(),
      end: b.toISOString(),
      limit: "1",
    });
    expect(response.status).toBe(200);
    const data = response.body.data as {
      rows: Row[];
      other: Row & { sources: number };
      totals: Row;
      sources_total: number;
    };
    const expected = expectedBySource(facts, "referrer_domain", a, b);
    expect(data.rows).toHaveLength(1);
    expect(data.sources_total).toBe(expected.size);
    expect(data.other.sources).toBe(expected.size - 1);
    const all = [...expected.values()];
    expect(data.totals.clicks).toBe(all.reduce((s, e) => s + e.clicks, 0));
    expect(data.rows[0]?.clicks).toBe(Math.max(...all.map((e) => e.clicks)));
    expect((data.rows[0]?.clicks ?? 0) + data.other.clicks).toBe(data.totals.clicks);
    const revenue = (c: string) => all.reduce((s, e) => s + (e.money[c]?.revenue_cents ?? 0), 0);
    for (const c of ["USD", "EUR", "VND"]) expect(data.totals.money[c]?.revenue_cents ?? 0).toBe(revenue(c));
  });
});

describe("GET /api/v1/programs/me/analytics/sources: errors", () => {
  const cases: Array<{ query: Record<string, string>; parameter: string; message: string }> = [
    {
      query: { group_by: "country" },
      parameter: "group_by",
      message:
        "group_by must be one of: partner, link, referrer_domain, utm_source, utm_medium, utm_campaign, landing_page.",
    },
    {
      query: { interval: "forever" },
      parameter: "interval",
      message:
        "interval must be one of: today, yesterday, last_7_days, last_30_days, last_90_days, last_365_days, month_to_date, year_to_date.",
    },
    {
      query: { timezone: "Mars/Olympus" },
      parameter: "timezone",
      message: "timezone must be an IANA time zone name, for example Europe/Paris.",
    },
    { query: { limit: "0" }, parameter: "limit", message: "limit must be a whole number from 1 to 100." },
    { query: { limit: "abc" }, parameter: "limit", message: "limit must be a whole number from 1 to 100." },
    { query: { start: "2026-01-01" }, parameter: "end", message: "start and end must be sent together." },
    { query: { end: "2026-01-01" }, parameter: "start", message: "start and end must be sent together." },
    {
      query: { interval: "today", start: "2026-01-01", end: "2026-01-02" },
      parameter: "interval",
      message: "Send either interval or start and end, not both.",
    },
    {
      query: { start: "2026-02-30", end: "2026-03-02" },
      parameter: "start",
      message: "start must be a date (YYYY-MM-DD) or an ISO 8601 time with an offset.",
    },
    {
      query: { start: "2026-01-01", end: "2026-01-01T00:00:00" },
      parameter: "end",
      message: "end must be a date (YYYY-MM-DD) or an ISO 8601 time with an offset.",
    },
    {
      query: { start: "2026-03-01", end: "2026-02-01" },
      parameter: "end",
      message: "end must be after start.",
    },
    {
      query: { start: "2020-01-01", end: "2026-01-01" },
      parameter: "end",
      message: "The range must be at most 731 days.",
    },
    {
      query: { groupby: "partner" },
      parameter: "groupby",
      message: "Unknown parameter groupby. Known: group_by, interval, start, end, timezone, limit.",
    },
  ];
  it.each(cases)("400 invalid_parameter naming $parameter", async ({ query, parameter, message }) => {
    const q = await createProgram();
    const response = await analyticsOf(q.apiKey, query);
    expect(response.status).toBe(400);
    expect(response.body).toEqual({
      data: null,
      error: {
        status: 400,
        name: "BadRequestError",
        message,
        details: { parameter },
      },
    });
  });

  it.each<{ name: string; headers: Record<string, string>; message: string }>([
    {
      name: "no header",
      headers: {},
      message: "Missing or malformed Authorization header. Expected: Bearer <token>.",
    },
    { name: "empty token", headers: { Authorization: "Bearer " }, message: "Missing API token." },
    {
      name: "unknown token",
      headers: { Authorization: "Bearer sk_live_nope" },
      message: "Invalid API token.",
    },
  ])("401 $name", async ({ headers, message }) => {
    const response = await getJson(path, headers);
    expect(response.status).toBe(401);
    expect(response.body).toEqual({
      data: null,
      error: { status: 401, name: "UnauthorizedError", message, details: {} },
    });
  });
});
