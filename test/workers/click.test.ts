import { sql } from "drizzle-orm";
import { beforeAll, describe, expect, it } from "vitest";
import { clicksOfProgram, createProgram, db, type ProgramFixture, postJson } from "./harness.ts";

const clickPath = "/api/v1/track/click";
const platform = (status: number, name: string, message: string) => ({
  data: null,
  error: { status, name, message, details: {} },
});

describe("POST /api/v1/track/click errors", () => {
  let p: ProgramFixture;
  let otherProgram: ProgramFixture;
  beforeAll(async () => {
    [p, otherProgram] = await Promise.all([createProgram(), createProgram()]);
  });

  const url = (query: string) => `https://shop.example/landing${query}`;

  const cases: Array<{
    name: string;
    body: (p: ProgramFixture) => unknown;
    headers?: (p: ProgramFixture) => Record<string, string>;
    status: number;
    expected: (p: ProgramFixture) => unknown;
  }> = [
    {
      name: "no body fields",
      body: () => ({}),
      status: 400,
      expected: () => platform(400, "BadRequestError", "affiliate_url is required"),
    },
    {
      name: "null affiliate_url",
      body: () => ({ affiliate_url: null }),
      status: 400,
      expected: () => platform(400, "BadRequestError", "affiliate_url is required"),
    },
    {
      name: "empty affiliate_url",
      body: () => ({ affiliate_url: "  " }),
      status: 400,
      expected: () => platform(400, "BadRequestError", "affiliate_url is required"),
    },
    {
      name: "JSON array body",
      body: () => [],
      status: 400,
      expected: () => platform(400, "BadRequestError", "affiliate_url is required"),
    },
    {
      name: "non-string affiliate_url",
      body: () => ({ affiliate_url: 42 }),
      status: 400,
      expected: () => platform(400, "BadRequestError", "Invalid affiliate_url"),
    },
    {
      name: "URL without scheme",
      body: (p) => ({ affiliate_url: `shop.example/?aff=${p.links[0]}` }),
      status: 400,
      expected: () => platform(400, "BadRequestError", "Invalid affiliate_url"),
    },
    {
      name: "relative URL",
      body: (p) => ({ affiliate_url: `/landing?aff=${p.links[0]}` }),
      status: 400,
      expected: () => platform(400, "BadRequestError", "Invalid affiliate_url"),
    },
    {
      name: "non-http scheme",
      body: (p) => ({ affiliate_url: `javascript:alert(1)//?aff=${p.links[0]}` }),
      status: 400,
      expected: () => platform(400, "BadRequestError", "Invalid affiliate_url"),
    },
    {
      name: "no aff or via",
      body: () => ({ affiliate_url: url("?ref=x") }),
      status: 400,
      expected: () => platform(400, "BadRequestError", "No aff parameter found in affiliate_url"),
    },
    {
      name: "empty aff",
      body: () => ({ affiliate_url: url("?aff=") }),
      status: 400,
      expected: () => platform(400, "BadRequestError", "No aff parameter found in affiliate_url"),
    },
    {
      name: "unknown program_id",
      body: (p) => ({ affiliate_url: url(`?aff=${p.links[0]}`), program_id: 2_000_000_000 }),
      status: 400,
      expected: () => platform(400, "BadRequestError", "Unknown program_id"),
    },
    {
      name: "non-numeric program_id",
      body: (p) => ({ affiliate_url: url(`?aff=${p.links[0]}`), program_id: "abc" }),
      status: 400,
      expected: () => platform(400, "BadRequestError", "Unknown program_id"),
    },
    {
      name: "unknown additional_data.program_id",
      body: (p) => ({
        affiliate_url: url(`?aff=${p.links[0]}`),
        additional_data: { program_id: 2_000_000_000 },
      }),
      status: 400,
      expected: () => platform(400, "BadRequestError", "Unknown program_id"),
    },
    {
      name: "unknown link",
      body: () => ({ affiliate_url: url("?aff=no-such-code-anywhere") }),
      status: 400,
      expected: () => platform(400, "BadRequestError", "Referral link not found"),
    },
    {
      name: "link of another program",
      body: async (p) => ({
        affiliate_url: url(`?aff=${p.links[0]}`),
        program_id: (await createProgram()).programId,
      }),
      status: 400,
      expected: () => platform(400, "BadRequestError", "Referral link not found"),
    },
    {
      name: "link without partner",
      body: (p) => ({ affiliate_url: url(`?aff=${p.linkWithoutPartner}`) }),
      status: 400,
      expected: () => platform(400, "BadRequestError", "Invalid referral link configuration"),
    },
    {
      name: "test mode with another program's key",
      body: async (p) => ({
        affiliate_url: url(`?aff=${p.links[0]}`),
        additional_data: { test_mode: true, program_id: p.programId },
      }),
      headers: () => ({ Authorization: `Bearer ${otherProgram.apiKey}` }),
      status: 403,
      expected: () => platform(403, "ForbiddenError", "program_id does not match the API key"),
    },
    {
      name: "disabled link",
      body: (p) => ({ affiliate_url: url(`?aff=${p.disabledLink}`) }),
      status: 410,
      expected: () => ({
        success: false,
        message: "This referral link has been disabled",
        hint: expect.any(String),
        error: {
          code: "link_disabled",
          message: "This referral link has been disabled",
          hint: expect.any(String),
        },
      }),
    },
    {
      name: "malformed JSON",
      body: () => "{not json",
      status: 400,
      expected: () => platform(400, "BadRequestError", "Malformed JSON in request body"),
    },
    {
      name: "a body that is not JSON by its Content-Type",
      body: (p) => ({ affiliate_url: url(`?aff=${p.links[0]}`) }),
      headers: () => ({ "Content-Type": "text/plain" }),
      status: 400,
      expected: () => platform(400, "BadRequestError", "Content-Type must be application/json"),
    },
    {
      name: "test_mode not a boolean",
      body: (p) => ({ affiliate_url: url(`?aff=${p.links[0]}`), additional_data: { test_mode: "yes" } }),
      status: 400,
      expected: () => platform(400, "BadRequestError", "additional_data.test_mode must be a boolean"),
    },
  ];

  it.each(cases)("$name -> $status", async ({ body, headers, status, expected }) => {
    const before = (await clicksOfProgram(p.programId)).length;
    const response = await postJson(clickPath, await body(p), headers?.(p) ?? {});
    expect(response.status).toBe(status);
    expect(response.body).toEqual(expected(p));
    expect(response.headers.get("X-Request-ID")).toMatch(/^req_/);
    expect((await clicksOfProgram(p.programId)).length).toBe(before);
  });
});

describe("POST /api/v1/track/click success", () => {
  it("records the click with aff and returns click_id and cookie_window_days", async () => {
    const p = await createProgram({ attributionWindowDays: 45 });
    const response = await postJson(clickPath, { affiliate_url: `https://shop.example/?aff=${p.links[0]}` });
    expect(response.status).toBe(200);
    expect(response.body).toEqual({
      success: true,
      click_id: expect.stringMatching(/^clk_[A-Za-z0-9_-]{22}$/),
      cookie_window_days: 45,
    });
    const clicks = await clicksOfProgram(p.programId);
    expect(clicks).toHaveLength(1);
    expect(clicks[0]).toMatchObject({
      clickId: response.body.click_id,
      partnerId: p.partnerIds[0],
      isTest: false,
      visitorClickId: null,
    });
  });

  it("accepts via, and a matching top-level program_id", async () => {
    const p = await createProgram();
    const response = await postJson(clickPath, {
      affiliate_url: `https://shop.example/?via=${p.links[1]}`,
      program_id: p.programId,
    });
    expect(response.status).toBe(200);
    const clicks = await clicksOfProgram(p.programId);
    expect(clicks[0]?.partnerId).toBe(p.partnerIds[1]);
  });

  it("records a flagged test click, with the key's own program", async () => {
    const p = await createProgram();
    const response = await postJson(
      clickPath,
      {
        affiliate_url: `https://shop.example/?aff=${p.links[0]}`,
        additional_data: { test_mode: true, program_id: p.programId },
      },
      { Authorization: `Bearer ${p.apiKey}` },
    );
    expect(response.status).toBe(200);
    expect((await clicksOfProgram(p.programId))[0]?.isTest).toBe(true);
  });

  it("takes a null test_mode as absent, like its other optional fields and the sale's and refund's", async () => {
    const p = await createProgram();
    const response = await postJson(clickPath, {
      affiliate_url: `https://shop.example/?aff=${p.links[0]}`,
      additional_data: { test_mode: null },
    });
    expect(response.status).toBe(200);
    expect((await clicksOfProgram(p.programId))[0]?.isTest).toBe(false);
  });

  it("does not check a keyless test click against any key", async () => {
    const p = await createProgram();
    const response = await postJson(clickPath, {
      affiliate_url: `https://shop.example/?aff=${p.links[0]}`,
      additional_data: { test_mode: true },
    });
    expect(response.status).toBe(200);
    expect((await clicksOfProgram(p.programId))[0]?.isTest).toBe(true);
  });
});

describe("first click", () => {
  it("logs a second partner's click but returns the visitor's original click id", async () => {
    const p = await createProgram();
    const first = await postJson(clickPath, { affiliate_url: `https://shop.example/?aff=${p.links[0]}` });
    const second = await postJson(clickPath, {
      affiliate_url: `https://shop.example/?aff=${p.links[1]}`,
      click_id: first.body.click_id,
    });
    expect(second.status).toBe(200);
    expect(second.body.click_id).toBe(first.body.click_id);
    const clicks = await clicksOfProgram(p.programId);
    expect(clicks).toHaveLength(2);
    expect(clicks[1]).toMatchObject({ partnerId: p.partnerIds[1], visitorClickId: first.body.click_id });
    expect(clicks[1]?.clickId).not.toBe(first.body.click_id);
  });

  it("sent a later partner's click id, retains the visitor's first click (its partner keeps the customer)", async () => {
    const p = await createProgram({ attributionWindowDays: 7 });
    const first = await postJson(clickPath, { affiliate_url: `https://shop.example/?aff=${p.links[0]}` });
    await postJson(clickPath, {
      affiliate_url: `https://shop.example/?aff=${p.links[1]}`,
      click_id: first.body.click_id,
    });
    // The later click's own id: never answered to the browser, but a caller may have it (the events feed).
    const later = (await clicksOfProgram(p.programId))[1]!.clickId;
    const third = await postJson(clickPath, {
      affiliate_url: `https://shop.example/?aff=${p.links[1]}`,
      click_id: later,
    });
    expect(third.body.click_id).toBe(first.body.click_id);
    expect((await clicksOfProgram(p.programId))[2]?.visitorClickId).toBe(first.body.click_id);
    // The window counts from the first click: once it has passed, the visitor starts over.
    await db.execute(
      sql`update affiliate_click_events set created_at = now() - interval '8 days' where click_id = ${first.body.click_id as string}`,
    );
    const fourth = await postJson(clickPath, {
      affiliate_url: `https://shop.example/?aff=${p.links[1]}`,
      click_id: later,
    });
    expect(fourth.body.click_id).not.toBe(first.body.click_id);
    expect(fourth.body.click_id).not.toBe(later);
    expect((await clicksOfProgram(p.programId))[3]?.visitorClickId).toBeNull();
  });

  it("starts over when the original click is older than the attribution window", async () => {
    const p = await createProgram({ attributionWindowDays: 7 });
    const first = await postJson(clickPath, { affiliate_url: `https://shop.example/?aff=${p.links[0]}` });
    await db.execute(
      sql`update affiliate_click_events set created_at = now() - interval '8 days' where click_id = ${first.body.click_id as string}`,
    );
    const second = await postJson(clickPath, {
      affiliate_url: `https://shop.example/?aff=${p.links[1]}`,
      click_id: first.body.click_id,
    });
    expect(second.status).toBe(200);
    expect(second.body.click_id).not.toBe(first.body.click_id);
    expect((await clicksOfProgram(p.programId))[1]?.visitorClickId).toBeNull();
  });

  it("ignores a click id of another program or an unknown one", async () => {
    const p = await createProgram();
    const other = await createProgram();
    const foreign = await postJson(clickPath, {
      affiliate_url: `https://shop.example/?aff=${other.links[0]}`,
    });
    for (const clickId of [foreign.body.click_id, "clk_doesnotexist"]) {
      const response = await postJson(clickPath, {
        affiliate_url: `https://shop.example/?aff=${p.links[1]}`,
        click_id: clickId,
      });
      expect(response.status).toBe(200);
      expect(response.body.click_id).not.toBe(clickId);
    }
  });
});

describe("click with keys in test mode", () => {
  it("checks the key's program before whether additional_data.program_id exists (403 first)", async () => {
    const p = await createProgram();
    const response = await postJson(
      clickPath,
      {
        affiliate_url: `https://shop.example/?aff=${p.links[0]}`,
        additional_data: { test_mode: true, program_id: 2_000_000_000 },
      },
      { Authorization: `Bearer ${p.apiKey}` },
    );
    expect(response.status).toBe(403);
    expect(response.body).toEqual(platform(403, "ForbiddenError", "program_id does not match the API key"));
  });

  it("ignores a key past its rotation deadline, like an unknown key (click has no 401)", async () => {
    const p = await createProgram();
    const other = await createProgram();
    await db.execute(
      sql`update program_api_keys set rotate_by = now() - interval '1 minute', rotation_marked_at = now() - interval '1 day' where program_id = ${other.programId}`,
    );
    const response = await postJson(
      clickPath,
      {
        affiliate_url: `https://shop.example/?aff=${p.links[0]}`,
        additional_data: { test_mode: true, program_id: p.programId },
      },
      { Authorization: `Bearer ${other.apiKey}` },
    );
    expect(response.status).toBe(200);
  });
});

describe("POST /api/v1/track/click: the click's analytics dimensions", () => {
  const landing =
    "https://WWW.Shop.Example/Pricing?aff=CODE&utm_source=News%20Letter&utm_medium=email&utm_campaign=caf%C3%A9+club#top";
  const dimensions = {
    referrerDomain: "news.example",
    utmSource: "News Letter",
    utmMedium: "email",
    utmCampaign: "café club",
    landingPage: "shop.example/Pricing",
    landingOrigin: "https://www.shop.example",
  };

  it("are derived from its URLs and written with it", async () => {
    const p = await createProgram();
    const response = await postJson(clickPath, {
      affiliate_url: landing.replace("CODE", p.links[0]!),
      referrer: "https://www.News.Example/today",
    });
    expect(response.status).toBe(200);
    expect((await clicksOfProgram(p.programId))[0]).toMatchObject(dimensions);
  });

  it("a worker deployed before migration 0042 (record_click) still gets them written, by the database", async () => {
    const p = await createProgram();
    const clickId = `clk_before_0042_${p.programId}`;
    const result = await db.execute<{ recorded: boolean }>(sql`
      select * from record_click(${p.links[0]}, null, now(), null, false, ${clickId},
        ${landing.replace("CODE", p.links[0]!)}, 'https://www.News.Example/today', null, null, null, null, false, null)`);
    expect(result.rows[0]?.recorded).toBe(true);
    expect((await clicksOfProgram(p.programId))[0]).toMatchObject({ clickId, ...dimensions });
  });
});
