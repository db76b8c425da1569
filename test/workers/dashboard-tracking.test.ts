import { eq, sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { clickEvents, cliSyntheticChains, programApiKeys, refunds, saleEvents } from "../../schema/index.ts";
import {
  call,
  type LooseJson,
  type Person,
  programOf,
  SAME_ORIGIN,
  signInPerson,
} from "./dashboard-tracking-helpers.ts";
import { db, type ProgramFixture, postJson, unique } from "./harness.ts";
import { refund } from "./refund-harness.ts";
import { click, sale } from "./sale-harness.ts";

async function signedInWithProgram(): Promise<{ person: Person; p: ProgramFixture }> {
  const person = await signInPerson();
  return { person, p: await programOf(person) };
}

async function lead(p: ProgramFixture, clickId: string, customerKey: string) {
  const response = await postJson(
    "/api/v1/track/lead",
    { click_id: clickId, customer_key: customerKey },
    { Authorization: `Bearer ${p.apiKey}` },
  );
  if (response.status !== 200) throw new Error(`lead failed: ${JSON.stringify(response.body)}`);
}

/** A live click, lead, sale and partial refund of one customer, plus a test click; returns what was sent. */
async function recordFunnel(p: ProgramFixture) {
  const clickId = await click(p, p.links[0]);
  const customerKey = unique("customer");
  await lead(p, clickId, customerKey);
  const transactionId = unique("txn");
  const sold = await sale(p, {
    transaction_id: transactionId,
    amount_cents: 5000,
    customer_key: customerKey,
  });
  expect(sold.status).toBe(200);
  const refunded = await refund(p, { transaction_id: transactionId, refund_amount_cents: 1000 });
  expect(refunded.status).toBe(200);
  const testClick = await postJson("/api/v1/track/click", {
    affiliate_url: `https://shop.example/?aff=${p.links[1]}`,
    additional_data: { test_mode: true, program_id: p.programId },
  });
  expect(testClick.status).toBe(200);
  return { clickId, customerKey, transactionId, testClickId: testClick.body.click_id as string };
}

describe("GET /api/tracking/status/:programId", () => {
  it("reports the command line's integration status of the program", async () => {
    const { person, p } = await signedInWithProgram();
    const before = await call("GET", `/api/tracking/status/${p.programId}`, { cookie: person.token });
    expect(before.status).toBe(200);
    expect(before.body.data).toMatchObject({
      program: { id: p.programId },
      verified: false,
      steps: { click: { live: false, test: false, last_at: null } },
    });
    expect(before.body.data.next_step).toContain("No click recorded yet");
    await recordFunnel(p);
    const after = await call("GET", `/api/tracking/status/${p.programId}`, { token: person.token });
    expect(after.body.data.verified).toBe(true);
    expect(after.body.data.steps.click).toMatchObject({ live: true, test: true });
    expect(after.body.data.steps.sale).toMatchObject({ live: true, test: false });
    expect(after.body.data.next_step).toBeNull();
  });
});

describe("GET /api/tracking/readiness/:programId", () => {
  it("answers the readiness endpoint's own verdict", async () => {
    const { person, p } = await signedInWithProgram();
    await recordFunnel(p);
    const dashboard = await call("GET", `/api/tracking/readiness/${p.programId}`, { token: person.token });
    const keyed = await call("GET", "/api/v1/programs/me/readiness", { token: p.apiKey });
    expect(dashboard.status).toBe(200);
    expect(keyed.status).toBe(200);
    expect(dashboard.body.success).toBeUndefined();
    const { checked_at: _a, ...mine } = dashboard.body;
    const { checked_at: _b, ...theirs } = keyed.body;
    expect(mine).toEqual(theirs);
    expect(mine.program_id).toBe(p.programId);
  });
});

describe("GET /api/tracking/events/:programId", () => {
  it("lists clicks, leads, sales and refunds newest first, test events marked", async () => {
    const { person, p } = await signedInWithProgram();
    const sent = await recordFunnel(p);
    const response = await call("GET", `/api/tracking/events/${p.programId}`, { token: person.token });
    expect(response.status).toBe(200);
    const events = response.body.data.events as LooseJson[];
    expect(events.map((e) => [e.kind, e.test])).toEqual([
      ["click", true],
      ["refund", false],
      ["sale", false],
      ["lead", false],
      ["click", false],
    ]);
    const [testClick, refunded, sold, led, clicked] = events;
    expect(testClick.click_id).toBe(sent.testClickId);
    expect(testClick.partner).toEqual({ id: p.partnerIds[1], name: "Partner B" });
    expect(refunded).toMatchObject({
      amount_cents: 1000,
      currency: "USD",
      transaction_id: sent.transactionId,
      reason: "refund",
    });
    expect(sold).toMatchObject({
      amount_cents: 5000,
      transaction_id: sent.transactionId,
      partner: { id: p.partnerIds[0] },
    });
    expect(led).toMatchObject({ click_id: sent.clickId, customer_key: sent.customerKey, provisional: false });
    expect(clicked).toMatchObject({
      click_id: sent.clickId,
      link: p.links[0],
      partner: { id: p.partnerIds[0], name: "Partner A" },
    });
    const times = events.map((e) => Date.parse(e.created_at));
    expect([...times].sort((a, b) => b - a)).toEqual(times);
    expect(response.body.data.next_cursor).toBeNull();
  });

  it("filters by kind and by live or test, and walks every page with the cursor", async () => {
    const { person, p } = await signedInWithProgram();
    await recordFunnel(p);
    await recordFunnel(p);
    const get = (query: string) =>
      call("GET", `/api/tracking/events/${p.programId}?${query}`, { token: person.token });
    const money = await get("kind=sale,refund");
    expect(money.body.data.events.map((e: LooseJson) => e.kind)).toEqual([
      "refund",
      "sale",
      "refund",
      "sale",
    ]);
    const tests = await get("mode=test");
    expect(tests.body.data.events.map((e: LooseJson) => [e.kind, e.test])).toEqual([
      ["click", true],
      ["click", true],
    ]);
    const live = await get("mode=live&kind=click");
    expect(live.body.data.events).toHaveLength(2);
    expect(live.body.data.events.every((e: LooseJson) => !e.test)).toBe(true);

    const all = (await get("limit=100")).body.data.events as LooseJson[];
    expect(all).toHaveLength(10);
    const walked: LooseJson[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const page: LooseJson = await get(`limit=3${cursor ? `&cursor=${cursor}` : ""}`);
      expect(page.status).toBe(200);
      walked.push(...page.body.data.events);
      cursor = page.body.data.next_cursor;
      pages++;
    } while (cursor);
    expect(pages).toBe(4);
    expect(walked).toEqual(all);
  });

  it("orders events of the same instant by kind then id, so a cursor never skips or repeats one", async () => {
    const { person, p } = await signedInWithProgram();
    await recordFunnel(p);
    const at = "2026-01-05T10:00:00.123456Z";
    await db.execute(
      sql`update ${clickEvents} set created_at = ${at}::timestamptz where program_id = ${p.programId}`,
    );
    await db.execute(
      sql`update ${saleEvents} set created_at = ${at}::timestamptz where program_id = ${p.programId}`,
    );
    const all = await call("GET", `/api/tracking/events/${p.programId}?kind=click,sale`, {
      token: person.token,
    });
    expect(all.body.data.events.map((e: LooseJson) => e.kind)).toEqual(["sale", "click", "click"]);
    const ids = all.body.data.events.filter((e: LooseJson) => e.kind === "click").map((e: LooseJson) => e.id);
    expect(ids[0]).toBeGreaterThan(ids[1]);
    const walked: LooseJson[] = [];
    let cursor: string | null = null;
    do {
      const page: LooseJson = await call(
        "GET",
        `/api/tracking/events/${p.programId}?kind=click,sale&limit=1${cursor ? `&cursor=${cursor}` : ""}`,
        { token: person.token },
      );
      walked.push(...page.body.data.events);
      cursor = page.body.data.next_cursor;
    } while (cursor);
    expect(walked).toEqual(all.body.data.events);
  });

  it("gives each refund its sale's program at insert (migration 0016)", async () => {
    const { p } = await signedInWithProgram();
    const sent = await recordFunnel(p);
    const rows = await db
      .select({ programId: refunds.programId })
      .from(refunds)
      .innerJoin(saleEvents, eq(saleEvents.id, refunds.saleId))
      .where(eq(saleEvents.processorEventId, sent.transactionId));
    expect(rows).toEqual([{ programId: p.programId }]);
  });
});

describe("GET /api/tracking/performance/:programId", () => {
  it("sums live events per local day in the time zone, per partner, test events excluded", async () => {
    const { person, p } = await signedInWithProgram();
    await recordFunnel(p);
    const second = await click(p, p.links[1]);
    // 23:30 UTC on Jan 10 is already Jan 11 in Paris (UTC+1 in winter).
    await db.execute(
      sql`update ${clickEvents} set created_at = '2026-01-10T23:30:00Z' where program_id = ${p.programId} and click_id = ${second}`,
    );
    await db.execute(
      sql`update ${clickEvents} set created_at = '2026-01-11T09:00:00Z' where program_id = ${p.programId} and click_id <> ${second}`,
    );
    await db.execute(
      sql`update ${saleEvents} set created_at = '2026-01-11T09:05:00Z' where program_id = ${p.programId}`,
    );
    await db.execute(
      sql`update affiliate_lead_events set created_at = '2026-01-11T09:01:00Z' where program_id = ${p.programId}`,
    );
    await db.execute(
      sql`update commissions set created_at = '2026-01-11T09:05:00Z' where program_id = ${p.programId}`,
    );
    await db.execute(
      sql`update ${refunds} set created_at = '2026-01-12T08:00:00Z' where program_id = ${p.programId}`,
    );

    const get = (query: string) =>
      call("GET", `/api/tracking/performance/${p.programId}?${query}`, { token: person.token });
    const utc = await get("start=2026-01-10&end=2026-01-12");
    expect(utc.status).toBe(200);
    expect(
      utc.body.data.series.map((d: LooseJson) => [d.date, d.clicks, d.leads, d.sales, d.refunds]),
    ).toEqual([
      ["2026-01-10", 1, 0, 0, 0],
      ["2026-01-11", 1, 1, 1, 0],
      ["2026-01-12", 0, 0, 0, 1],
    ]);
    expect(utc.body.data.series[1].money.USD).toEqual({
      sales: 1,
      revenue_cents: 5000,
      refunds: 0,
      refunded_cents: 0,
      net_revenue_cents: 5000,
      commission_cents: 1000,
    });
    expect(utc.body.data.totals).toMatchObject({ clicks: 2, leads: 1, sales: 1 });
    expect(utc.body.data.totals.money.USD).toMatchObject({
      revenue_cents: 5000,
      refunded_cents: 1000,
      net_revenue_cents: 4000,
    });
    expect(utc.body.data.partners.map((r: LooseJson) => [r.partner_id, r.name, r.clicks, r.sales])).toEqual([
      [p.partnerIds[0], "Partner A", 1, 1],
      [p.partnerIds[1], "Partner B", 1, 0],
    ]);
    expect(utc.body.data.other_partners).toBeNull();

    const paris = await get("start=2026-01-10&end=2026-01-12&timezone=Europe/Paris");
    expect(paris.body.data).toMatchObject({
      timezone: "Europe/Paris",
      start: "2026-01-09T23:00:00.000Z",
      end: "2026-01-12T23:00:00.000Z",
    });
    expect(paris.body.data.series.map((d: LooseJson) => [d.date, d.clicks])).toEqual([
      ["2026-01-10", 0],
      ["2026-01-11", 2],
      ["2026-01-12", 0],
    ]);
    const one = await get("start=2026-01-10&end=2026-01-12&limit=1");
    expect(one.body.data.partners).toHaveLength(1);
    expect(one.body.data.other_partners).toMatchObject({ sources: 1, clicks: 1 });
  });

  it("answers every day of the range with zeros for a program without events", async () => {
    const { person, p } = await signedInWithProgram();
    const response = await call(
      "GET",
      `/api/tracking/performance/${p.programId}?interval=last_7_days&timezone=Asia/Kolkata`,
      {
        token: person.token,
      },
    );
    expect(response.status).toBe(200);
    expect(response.body.data.series).toHaveLength(7);
    expect(
      response.body.data.series.every((d: LooseJson) => d.clicks === 0 && Object.keys(d.money).length === 0),
    ).toBe(true);
    expect(response.body.data.partners).toEqual([]);
  });
});

describe("POST /api/tracking/test and check-test-events", () => {
  it("records each kind of test event through the tracking endpoints and sees it land", async () => {
    const { person, p } = await signedInWithProgram();
    const refs: LooseJson[] = [];
    for (const eventType of ["click", "lead", "sale"]) {
      const response = await call("POST", "/api/tracking/test", {
        cookie: person.token,
        origin: SAME_ORIGIN,
        body: { program_id: p.programId, event_type: eventType },
      });
      expect(response.status).toBe(200);
      expect(response.body.data).toMatchObject({
        program_id: p.programId,
        test_mode: true,
        step: { step: eventType, ok: true, status: 200 },
      });
      expect(response.body.data.event.kind).toBe(eventType);
      refs.push(response.body.data.event);
    }
    const liveClick = await click(p);
    const checked = await call("POST", "/api/tracking/check-test-events", {
      token: person.token,
      body: {
        program_id: p.programId,
        events: [...refs, { kind: "click", id: liveClick }, { kind: "sale", id: 1 }],
      },
    });
    expect(checked.status).toBe(200);
    expect(checked.body.data.events.map((e: LooseJson) => [e.kind, e.landed])).toEqual([
      ["click", true],
      ["lead", true],
      ["sale", true],
      ["click", false],
      ["sale", false],
    ]);
    expect(checked.body.data.all_landed).toBe(false);
    expect(checked.body.data.events[0].recorded_at).toMatch(/^\d{4}-\d{2}-\d{2}T/);
    const landed = await call("POST", "/api/tracking/check-test-events", {
      token: person.token,
      body: { program_id: p.programId, events: refs },
    });
    expect(landed.body.data.all_landed).toBe(true);

    // The test lead was sent with a key, so it counts toward verification; the run's key is gone.
    const status = await call("GET", `/api/tracking/status/${p.programId}`, { token: person.token });
    expect(status.body.data.steps.lead).toMatchObject({ live: false, test: true });
    expect(status.body.data.verified).toBe(true);
    const keys = await db.select().from(programApiKeys).where(eq(programApiKeys.programId, p.programId));
    expect(keys).toHaveLength(2);
  });

  it("does not count another program's test event as landed", async () => {
    const { person, p } = await signedInWithProgram();
    const other = await programOf(person);
    const made = await call("POST", "/api/tracking/test", {
      token: person.token,
      body: { program_id: other.programId, event_type: "sale" },
    });
    const checked = await call("POST", "/api/tracking/check-test-events", {
      token: person.token,
      body: { program_id: p.programId, events: [made.body.data.event] },
    });
    expect(checked.body.data.events[0]).toMatchObject({ landed: false, recorded_at: null });
  });
});

describe("POST /api/tracking/run-verification/:programId", () => {
  it("runs the synthetic chain, turns the status verified and leaves no key behind", async () => {
    const { person, p } = await signedInWithProgram();
    const response = await call("POST", `/api/tracking/run-verification/${p.programId}`, {
      cookie: person.token,
      origin: SAME_ORIGIN,
    });
    expect(response.status).toBe(200);
    expect(response.body.data).toMatchObject({ program_id: p.programId, test_mode: true, ok: true });
    expect(response.body.data.steps.map((s: LooseJson) => [s.step, s.ok, s.status])).toEqual([
      ["click", true, 200],
      ["lead", true, 200],
      ["sale", true, 200],
    ]);
    const status = await call("GET", `/api/tracking/status/${p.programId}`, { token: person.token });
    expect(status.body.data.verified).toBe(true);
    const feed = await call("GET", `/api/tracking/events/${p.programId}?mode=live`, { token: person.token });
    expect(feed.body.data.events).toEqual([]);
    const keys = await db.select().from(programApiKeys).where(eq(programApiKeys.programId, p.programId));
    expect(keys).toHaveLength(2);
  });

  it("another workspace cannot take the chain's link code (the victim's chain answered 500)", async () => {
    const stranger = await signedInWithProgram();
    const { person, p } = await signedInWithProgram();
    const partner = await call("POST", `/api/v1/programs/${stranger.p.programId}/partners`, {
      token: stranger.person.token,
      body: { name: "Squatter", email: `${unique("squat")}@partners.example` },
    });
    expect(partner.status).toBe(201);
    const squat = await call("POST", `/api/v1/programs/${stranger.p.programId}/links`, {
      token: stranger.person.token,
      body: { partner_id: partner.body.data.partner.id, short_link: `synthetic-verify-p${p.programId}` },
    });
    expect(squat.status).toBe(400);
    expect(squat.body).toEqual({
      data: null,
      error: {
        status: 400,
        name: "BadRequestError",
        message:
          "short_link must not start with synthetic-verify- (reserved for the verification chain's link)",
        details: {},
      },
    });
    const response = await call("POST", `/api/tracking/run-verification/${p.programId}`, {
      token: person.token,
    });
    expect(response.status).toBe(200);
    expect(response.body.data.ok).toBe(true);
  });

  it("shares the command line's cap of 10 chains per program per hour (typed 429, Retry-After)", async () => {
    const { person, p } = await signedInWithProgram();
    const startedAt = new Date(Date.now() - 30 * 60_000);
    await db
      .insert(cliSyntheticChains)
      .values(Array.from({ length: 10 }, () => ({ programId: p.programId, startedAt })));
    const response = await call("POST", `/api/tracking/run-verification/${p.programId}`, {
      token: person.token,
    });
    expect(response.status).toBe(429);
    const retryAfter = Number(response.headers.get("Retry-After"));
    expect(retryAfter).toBeGreaterThan(29 * 60);
    expect(retryAfter).toBeLessThanOrEqual(30 * 60);
    expect(response.body).toEqual({
      error: {
        code: "rate_limited",
        message: "Too many synthetic chains (max 10/program/hour).",
        status: 429,
        retry_after_seconds: retryAfter,
      },
    });
    const cli = await postJson(
      "/api/v1/cli/test-event",
      { type: "chain" },
      { Authorization: `Bearer ${p.apiKey}` },
    );
    expect(cli.status).toBe(429);
    const keys = await db.select().from(programApiKeys).where(eq(programApiKeys.programId, p.programId));
    expect(keys).toHaveLength(2);
  });
});
