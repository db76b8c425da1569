import { SELF } from "cloudflare:test";
import { eq } from "drizzle-orm";
import { beforeAll, describe, expect, it } from "vitest";
import { clickEvents, visitEvents } from "../../schema/index.ts";
import { createProgram, db, freshIp, type ProgramFixture, postJson } from "./harness.ts";
import { recordClick } from "./lead-helpers.ts";
import { burst, expectLimitedAfter } from "./rate-limit-helpers.ts";
import { countDatabaseRoundTrips } from "./round-trip-counter.ts";

const visitPath = "/api/v1/track/visit";
const roundTripsOf = countDatabaseRoundTrips();
const platform = (message: string) => ({
  data: null,
  error: { status: 400, name: "BadRequestError", message, details: {} },
});

function visitsOfProgram(programId: number) {
  return db.select().from(visitEvents).where(eq(visitEvents.programId, programId)).orderBy(visitEvents.id);
}

describe("POST /api/v1/track/visit errors", () => {
  let p: ProgramFixture;
  let other: ProgramFixture;
  let clickId: string;
  beforeAll(async () => {
    [p, other] = await Promise.all([createProgram(), createProgram()]);
    clickId = await recordClick(p.links[0]);
  });

  const page = "https://shop.example/pricing";
  const cases: Array<{ name: string; body: () => unknown; message: string }> = [
    { name: "no body fields", body: () => ({}), message: "click_id is required" },
    { name: "JSON array body", body: () => [], message: "click_id is required" },
    { name: "null click_id", body: () => ({ click_id: null, url: page }), message: "click_id is required" },
    { name: "blank click_id", body: () => ({ click_id: "  ", url: page }), message: "click_id is required" },
    {
      name: "numeric click_id",
      body: () => ({ click_id: 5, url: page }),
      message: "click_id must be a string",
    },
    {
      name: "overlong click_id",
      body: () => ({ click_id: "c".repeat(129), url: page }),
      message: "click_id must be at most 128 characters",
    },
    { name: "no url", body: () => ({ click_id: clickId }), message: "url is required" },
    { name: "blank url", body: () => ({ click_id: clickId, url: " " }), message: "url is required" },
    { name: "numeric url", body: () => ({ click_id: clickId, url: 7 }), message: "Invalid url" },
    { name: "relative url", body: () => ({ click_id: clickId, url: "/pricing" }), message: "Invalid url" },
    {
      name: "non-http url",
      body: () => ({ click_id: clickId, url: "javascript:alert(1)" }),
      message: "Invalid url",
    },
    {
      name: "overlong url",
      body: () => ({ click_id: clickId, url: `${page}?q=${"x".repeat(2048)}` }),
      message: "Invalid url",
    },
    {
      name: "numeric referrer",
      body: () => ({ click_id: clickId, url: page, referrer: 1 }),
      message: "referrer must be a string",
    },
    {
      name: "string program_id",
      body: () => ({ click_id: clickId, url: page, program_id: "1" }),
      message: "program_id must be a positive integer",
    },
    {
      name: "negative program_id",
      body: () => ({ click_id: clickId, url: page, program_id: -1 }),
      message: "program_id must be a positive integer",
    },
    {
      name: "additional_data not an object",
      body: () => ({ click_id: clickId, url: page, additional_data: "x" }),
      message: "additional_data must be an object",
    },
    {
      name: "test_mode not a boolean",
      body: () => ({ click_id: clickId, url: page, additional_data: { test_mode: "yes" } }),
      message: "additional_data.test_mode must be a boolean",
    },
    { name: "malformed JSON", body: () => "{nope", message: "Malformed JSON in request body" },
    {
      name: "unknown click_id",
      body: () => ({ click_id: "clk_no-such-click-anywhere", url: page }),
      message: "Unknown click_id",
    },
    {
      name: "click of another program than program_id",
      body: () => ({ click_id: clickId, url: page, program_id: other.programId }),
      message: "Unknown click_id",
    },
    {
      name: "program_id beyond 32 bits",
      body: () => ({ click_id: clickId, url: page, program_id: 2 ** 40 }),
      message: "Unknown click_id",
    },
  ];

  it.each(cases)("$name -> 400 $message", async ({ body, message }) => {
    const response = await postJson(visitPath, body());
    expect(response.status).toBe(400);
    expect(response.body).toEqual(platform(message));
    expect(response.headers.get("X-Request-ID")).toMatch(/^req_/);
    expect(response.headers.get("X-RateLimit-Limit")).toBe("120");
    expect(await visitsOfProgram(p.programId)).toHaveLength(0);
  });
});

describe("POST /api/v1/track/visit success", () => {
  it("records the page view under the click and its partner, with rate-limit headers", async () => {
    const p = await createProgram();
    const clickId = await recordClick(p.links[0]);
    const response = await postJson(visitPath, {
      click_id: clickId,
      url: "https://shop.example/pricing?plan=pro",
      referrer: "https://shop.example/",
      program_id: p.programId,
    });
    expect(response.status).toBe(200);
    expect(response.body).toEqual({ success: true });
    expect(response.headers.get("X-RateLimit-Limit")).toBe("120");
    expect(response.headers.get("X-RateLimit-Remaining")).toBe("119");
    expect(Number(response.headers.get("X-RateLimit-Reset"))).toBeGreaterThan(Date.now() / 1000 - 1);
    const visits = await visitsOfProgram(p.programId);
    expect(visits).toHaveLength(1);
    expect(visits[0]).toMatchObject({
      clickId,
      partnerId: p.partnerIds[0],
      url: "https://shop.example/pricing?plan=pro",
      referrer: "https://shop.example/",
      isTest: false,
    });
  });

  it("stores a visit sent with a second partner's click id under the visitor's first click", async () => {
    const p = await createProgram();
    const first = await recordClick(p.links[0]);
    // A second click through partner B's link, sent without the cookie: its own id, logged for B.
    const unrelated = await recordClick(p.links[1]);
    const second = await recordClick(p.links[1], { visitorClickId: first });
    expect(second).toBe(first);
    const rows = await db.select().from(clickEvents).where(eq(clickEvents.visitorClickId, first));
    expect(rows).toHaveLength(1);
    const response = await postJson(visitPath, { click_id: rows[0]!.clickId, url: "https://shop.example/a" });
    expect(response.status).toBe(200);
    await postJson(visitPath, { click_id: unrelated, url: "https://shop.example/b" });
    const visits = await visitsOfProgram(p.programId);
    expect(visits.map((v) => [v.clickId, v.partnerId])).toEqual([
      [first, p.partnerIds[0]],
      [unrelated, p.partnerIds[1]],
    ]);
  });

  it("flags a visit in test mode, and any visit of a test click, as a test", async () => {
    const p = await createProgram();
    const live = await recordClick(p.links[0]);
    const test = await recordClick(p.links[0], { testMode: true });
    await postJson(visitPath, {
      click_id: live,
      url: "https://shop.example/",
      additional_data: { test_mode: true },
    });
    await postJson(visitPath, { click_id: test, url: "https://shop.example/" });
    await postJson(visitPath, { click_id: live, url: "https://shop.example/" });
    expect((await visitsOfProgram(p.programId)).map((v) => v.isTest)).toEqual([true, true, false]);
  });

  it("takes a null test_mode as absent, as the click and the lead do", async () => {
    const p = await createProgram();
    const live = await recordClick(p.links[0]);
    const response = await postJson(visitPath, {
      click_id: live,
      url: "https://shop.example/",
      additional_data: { test_mode: null },
    });
    expect(response.status).toBe(200);
    expect((await visitsOfProgram(p.programId)).map((v) => v.isTest)).toEqual([false]);
  });

  it("costs one database round trip, and none for an invalid body", async () => {
    const p = await createProgram();
    const clickId = await recordClick(p.links[0]);
    const ok = () => postJson(visitPath, { click_id: clickId, url: "https://shop.example/" });
    expect(await roundTripsOf(ok)).toBe(1);
    const unknown = () => postJson(visitPath, { click_id: "clk_unknown", url: "https://shop.example/" });
    expect(await roundTripsOf(unknown)).toBe(1);
    expect(await roundTripsOf(() => postJson(visitPath, { click_id: clickId }))).toBe(0);
  });
});

describe("POST /api/v1/track/visit CORS and rate limit", () => {
  it("lets the click's program's origins read the answer, and no other origin", async () => {
    const p = await createProgram();
    const other = await createProgram();
    const clickId = await recordClick(p.links[0]);
    const body = { click_id: clickId, url: "https://shop.example/" };
    const own = await postJson(visitPath, body, { Origin: p.origin });
    expect(own.status).toBe(200);
    expect(own.headers.get("Access-Control-Allow-Origin")).toBe(p.origin);
    expect(own.headers.get("Access-Control-Expose-Headers")).toContain("X-RateLimit-Remaining");
    const foreign = await postJson(visitPath, body, { Origin: other.origin });
    expect(foreign.headers.get("Access-Control-Allow-Origin")).toBeNull();
  });

  it("grants the preflight to an origin some program allows", async () => {
    const p = await createProgram();
    const response = await SELF.fetch(`https://api.test${visitPath}`, {
      method: "OPTIONS",
      headers: { Origin: p.origin, "Access-Control-Request-Method": "POST", "CF-Connecting-IP": freshIp() },
    });
    expect(response.status).toBe(204);
    expect(response.headers.get("Access-Control-Allow-Origin")).toBe(p.origin);
    expect(response.headers.get("Access-Control-Allow-Methods")).toContain("POST");
  });

  it("allows 120 visits per minute per IP, then answers 429", async () => {
    const send = (ip: string, body: unknown) =>
      SELF.fetch(`https://api.test${visitPath}`, {
        method: "POST",
        headers: { "Content-Type": "application/json", "CF-Connecting-IP": ip },
        body: JSON.stringify(body),
      });
    await expectLimitedAfter(await burst(send, {}, 121), 120);
  });
});
