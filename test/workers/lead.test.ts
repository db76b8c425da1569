import { SELF } from "cloudflare:test";
import { eq, sql } from "drizzle-orm";
import { beforeAll, describe, expect, it } from "vitest";
import { issueApiKey, sha256Hex } from "../../lib/auth/api-keys.ts";
import { clickEvents, customers, leadEvents, programApiKeys } from "../../schema/index.ts";
import { createProgram, db, freshIp, type ProgramFixture, postJson } from "./harness.ts";
import { bearer, customersOfProgram, leadEventsOfProgram, leadPath, recordClick } from "./lead-helpers.ts";

const platform = (status: number, name: string, message: string) => ({
  data: null,
  error: { status, name, message, details: {} },
});
const badRequest = (message: string) => platform(400, "BadRequestError", message);
const notFound = badRequest("Customer not found. Provide a valid click_id or customer_key.");
const docsUrl = "https://docs.affiliate-tracking.dev/api-keys#rotation";

/** Adds a key to the program, optionally marked for rotation. */
async function addKey(programId: number, rotation?: { markedAt: Date; rotateBy: Date }): Promise<string> {
  const key = await issueApiKey(false);
  await db.insert(programApiKeys).values({
    programId,
    keyHash: key.keyHash,
    keyPrefix: key.keyPrefix,
    rotationMarkedAt: rotation?.markedAt ?? null,
    rotateBy: rotation?.rotateBy ?? null,
  });
  return key.key;
}

describe("POST /api/v1/track/lead errors", () => {
  let p: ProgramFixture;
  let other: ProgramFixture;
  let clickId: string;
  let testClickId: string;
  let retiredKey: string;
  beforeAll(async () => {
    [p, other] = await Promise.all([createProgram(), createProgram()]);
    clickId = await recordClick(p.links[0]);
    testClickId = await recordClick(p.links[0], { testMode: true });
    retiredKey = await addKey(p.programId, {
      markedAt: new Date(Date.now() - 10 * 86_400_000),
      rotateBy: new Date(Date.now() - 60_000),
    });
  });

  const cases: Array<{
    name: string;
    body: () => unknown;
    headers?: () => Record<string, string>;
    status: number;
    expected: () => unknown;
  }> = [
    {
      name: "malformed JSON",
      body: () => "{not json",
      status: 400,
      expected: () => badRequest("Malformed JSON in request body"),
    },
    {
      name: "neither click_id nor customer_key (browser)",
      body: () => ({}),
      status: 400,
      expected: () => badRequest("click_id or customer_key is required"),
    },
    {
      name: "neither click_id nor customer_key (server)",
      body: () => ({ email: "a@b.example" }),
      headers: () => bearer(p.apiKey),
      status: 400,
      expected: () => badRequest("click_id or customer_key is required"),
    },
    {
      name: "empty strings count as absent",
      body: () => ({ click_id: "", customer_key: "  " }),
      status: 400,
      expected: () => badRequest("click_id or customer_key is required"),
    },
    {
      name: "JSON array body",
      body: () => [],
      status: 400,
      expected: () => badRequest("click_id or customer_key is required"),
    },
    {
      name: "customer_key without click_id and no key",
      body: () => ({ customer_key: "user-1" }),
      status: 400,
      expected: () => badRequest("click_id is required when no API key is sent"),
    },
    {
      name: "customer_key without click_id and an empty Bearer (browser mode)",
      body: () => ({ customer_key: "user-1" }),
      headers: () => ({ Authorization: "Bearer   " }),
      status: 400,
      expected: () => badRequest("click_id is required when no API key is sent"),
    },
    {
      name: "customer_key without click_id and no key, in test mode",
      body: () => ({ customer_key: "user-1", additional_data: { test_mode: true, program_id: p.programId } }),
      status: 400,
      expected: () => badRequest("click_id is required when no API key is sent"),
    },
    {
      name: "non-string click_id",
      body: () => ({ click_id: 42 }),
      status: 400,
      expected: () => badRequest("click_id must be a string"),
    },
    {
      name: "non-string customer_key",
      body: () => ({ click_id: clickId, customer_key: { id: 1 } }),
      status: 400,
      expected: () => badRequest("customer_key must be a string"),
    },
    {
      name: "customer_key longer than 255 characters",
      body: () => ({ click_id: clickId, customer_key: "k".repeat(256) }),
      status: 400,
      expected: () => badRequest("customer_key must be at most 255 characters"),
    },
    {
      name: "implausible email",
      body: () => ({ click_id: clickId, email: "jane at example" }),
      status: 400,
      expected: () => badRequest("email must be a valid email address"),
    },
    {
      name: "non-string email",
      body: () => ({ click_id: clickId, email: 12 }),
      status: 400,
      expected: () => badRequest("email must be a valid email address"),
    },
    {
      name: "non-integer program_id",
      body: () => ({ click_id: clickId, program_id: "1" }),
      status: 400,
      expected: () => badRequest("program_id must be a positive integer"),
    },
    {
      name: "additional_data not an object",
      body: () => ({ click_id: clickId, additional_data: "test" }),
      status: 400,
      expected: () => badRequest("additional_data must be an object"),
    },
    {
      name: "test_mode not a boolean",
      body: () => ({ click_id: clickId, additional_data: { test_mode: "yes" } }),
      status: 400,
      expected: () => badRequest("additional_data.test_mode must be a boolean"),
    },
    {
      name: "non-integer additional_data.program_id",
      body: () => ({ click_id: clickId, additional_data: { program_id: 1.5 } }),
      status: 400,
      expected: () => badRequest("additional_data.program_id must be a positive integer"),
    },
    {
      name: "event_name not a string",
      body: () => ({ click_id: clickId, additional_data: { event_name: 7 } }),
      status: 400,
      expected: () => badRequest("additional_data.event_name must be a string"),
    },
    {
      name: "unknown click (browser)",
      body: () => ({ click_id: "clk_doesnotexist", customer_key: "user-1" }),
      status: 400,
      expected: () => notFound,
    },
    {
      name: "test click outside test mode (browser)",
      body: () => ({ click_id: testClickId }),
      status: 400,
      expected: () => notFound,
    },
    {
      name: "browser program_id that is not the click's program",
      body: () => ({ click_id: clickId, program_id: other.programId }),
      status: 400,
      expected: () => notFound,
    },
    {
      name: "unknown click (server)",
      body: () => ({ click_id: "clk_doesnotexist", customer_key: "user-1" }),
      headers: () => bearer(p.apiKey),
      status: 400,
      expected: () => notFound,
    },
    {
      name: "test click outside test mode (server)",
      body: () => ({ click_id: testClickId }),
      headers: () => bearer(p.apiKey),
      status: 400,
      expected: () => notFound,
    },
    {
      name: "first lead with only customer_key (server)",
      body: () => ({ customer_key: "never-settled" }),
      headers: () => bearer(p.apiKey),
      status: 400,
      expected: () => notFound,
    },
    {
      name: "click of another program (server)",
      body: () => ({ click_id: clickId, customer_key: "user-1" }),
      headers: () => bearer(other.apiKey),
      status: 400,
      expected: () => badRequest("Customer does not belong to this program"),
    },
    {
      name: "unknown Bearer token",
      body: () => ({ click_id: clickId }),
      headers: () => bearer("sk_live_nosuchkey"),
      status: 401,
      expected: () => platform(401, "UnauthorizedError", "Invalid API token"),
    },
    {
      name: "unknown Bearer token with customer_key only",
      body: () => ({ customer_key: "user-1" }),
      headers: () => bearer("sk_live_nosuchkey"),
      status: 401,
      expected: () => platform(401, "UnauthorizedError", "Invalid API token"),
    },
    {
      name: "Authorization header not of the Bearer form",
      body: () => ({ click_id: clickId }),
      headers: () => ({ Authorization: `Basic ${btoa("user:pass")}` }),
      status: 401,
      expected: () =>
        platform(
          401,
          "UnauthorizedError",
          "Missing or malformed Authorization header. Expected: Bearer <token>",
        ),
    },
    {
      name: "a bare token without the Bearer scheme",
      body: () => ({ click_id: clickId }),
      headers: () => ({ Authorization: p.apiKey }),
      status: 401,
      expected: () =>
        platform(
          401,
          "UnauthorizedError",
          "Missing or malformed Authorization header. Expected: Bearer <token>",
        ),
    },
    {
      name: "key past its rotation deadline",
      body: () => ({ click_id: clickId }),
      headers: () => bearer(retiredKey),
      status: 401,
      expected: () => ({
        error: {
          code: "api_key_rotation_required",
          message: "This API key was retired after its rotation deadline.",
          hint: expect.any(String),
          docs_url: docsUrl,
        },
      }),
    },
    {
      name: "test mode with a key and another program's additional_data.program_id",
      body: () => ({ click_id: clickId, additional_data: { test_mode: true, program_id: other.programId } }),
      headers: () => bearer(p.apiKey),
      status: 403,
      expected: () => platform(403, "ForbiddenError", "program_id does not match the API key"),
    },
    {
      name: "test mode with a test key and another program's additional_data.program_id",
      body: () => ({ additional_data: { program_id: other.programId } }),
      headers: () => bearer(p.testApiKey),
      status: 403,
      expected: () => platform(403, "ForbiddenError", "program_id does not match the API key"),
    },
    {
      name: "test mode without a key naming an unknown program",
      body: () => ({ additional_data: { test_mode: true, program_id: 2_000_000_000 } }),
      status: 400,
      expected: () => badRequest("Unknown program_id"),
    },
    {
      name: "test mode without a key, unknown top-level program_id",
      body: () => ({ program_id: 2_000_000_000, additional_data: { test_mode: true } }),
      status: 400,
      expected: () => badRequest("Unknown program_id"),
    },
    {
      name: "test mode without a key and no program at all",
      body: () => ({ additional_data: { test_mode: true } }),
      status: 400,
      expected: () => badRequest("program_id is required in test mode without an API key"),
    },
    {
      name: "test mode without a key, unknown click and no program",
      body: () => ({ click_id: "clk_doesnotexist", additional_data: { test_mode: true } }),
      status: 400,
      expected: () => badRequest("program_id is required in test mode without an API key"),
    },
  ];

  it.each(cases)("$name -> $status", async ({ body, headers, status, expected }) => {
    const [eventsBefore, customersBefore] = await Promise.all([
      leadEventsOfProgram(p.programId),
      customersOfProgram(p.programId),
    ]);
    const response = await postJson(leadPath, body(), headers?.() ?? {});
    expect(response.status).toBe(status);
    expect(response.body).toEqual(expected());
    expect(response.headers.get("X-Request-ID")).toMatch(/^req_/);
    expect(response.headers.get("X-RateLimit-Limit")).toBe("30");
    expect(await leadEventsOfProgram(p.programId)).toHaveLength(eventsBefore.length);
    expect(await customersOfProgram(p.programId)).toHaveLength(customersBefore.length);
  });
});

describe("lead states", () => {
  it("browser lead under server_required is provisional; a server lead settles it", async () => {
    const p = await createProgram();
    const clickId = await recordClick(p.links[0]);
    const [click] = await db.select().from(clickEvents).where(eq(clickEvents.clickId, clickId));

    const browser = await postJson(leadPath, {
      click_id: clickId,
      customer_key: "user-42",
      program_id: p.programId,
      additional_data: { event_name: "signup" },
    });
    expect(browser.status).toBe(200);
    expect(browser.body).toEqual({
      success: true,
      provisional: true,
      message: "Lead recorded as provisional; confirm it from your server with the program API key.",
    });
    expect(await customersOfProgram(p.programId)).toEqual([]);
    const [provisional] = await leadEventsOfProgram(p.programId);
    expect(provisional).toMatchObject({
      clickId,
      customerKey: "user-42",
      customerId: null,
      partnerId: p.partnerIds[0],
      eventName: "signup",
      provisional: true,
      settledAt: null,
      viaApiKey: false,
      isTest: false,
    });

    // A second browser lead before settlement is still provisional (nothing settled yet).
    const again = await postJson(leadPath, { click_id: clickId, customer_key: "user-42" });
    expect(again.body.provisional).toBe(true);
    expect(await customersOfProgram(p.programId)).toEqual([]);

    const server = await postJson(leadPath, { click_id: clickId, customer_key: "user-42" }, bearer(p.apiKey));
    expect(server.status).toBe(200);
    expect(server.body).toEqual({ success: true, message: "Lead recorded" });
    const [customer, ...more] = await customersOfProgram(p.programId);
    expect(more).toEqual([]);
    expect(customer).toMatchObject({
      programId: p.programId,
      partnerId: p.partnerIds[0],
      clickId,
      customerKey: "user-42",
      status: "lead",
      isTest: false,
    });
    expect(customer?.signedUpAt).toBeInstanceOf(Date);
    expect(customer?.clickedAt?.getTime()).toBe(click?.createdAt.getTime());

    const events = await leadEventsOfProgram(p.programId);
    expect(events).toHaveLength(3);
    for (const event of events) {
      expect(event.settledAt).toBeInstanceOf(Date);
      expect(event.customerId).toBe(customer?.id);
    }
    expect(events.map((e) => [e.provisional, e.viaApiKey])).toEqual([
      [true, false],
      [true, false],
      [false, true],
    ]);

    // Now the customer is a lead: every further lead answers the status 400.
    const status = badRequest("Customer status cannot be updated to lead. Current status: lead");
    for (const [body, headers] of [
      [{ click_id: clickId }, bearer(p.apiKey)],
      [{ customer_key: "user-42" }, bearer(p.apiKey)],
      [{ click_id: clickId, customer_key: "user-42" }, {}],
    ] as const) {
      const response = await postJson(leadPath, body, headers);
      expect(response.status).toBe(400);
      expect(response.body).toEqual(status);
    }
    expect(await leadEventsOfProgram(p.programId)).toHaveLength(3);
  });

  it("browser lead under browser_allowed settles directly and saves customer_key", async () => {
    const p = await createProgram({ leadAuthPolicy: "browser_allowed" });
    const clickId = await recordClick(p.links[1]);
    const response = await postJson(leadPath, { click_id: clickId, customer_key: "u-7" });
    expect(response.status).toBe(200);
    expect(response.body).toEqual({ success: true, message: "Lead recorded" });
    const [customer] = await customersOfProgram(p.programId);
    expect(customer).toMatchObject({ partnerId: p.partnerIds[1], customerKey: "u-7", status: "lead" });
    const [event] = await leadEventsOfProgram(p.programId);
    expect(event).toMatchObject({ provisional: false, viaApiKey: false, customerId: customer?.id });
    expect(event?.settledAt).toBeInstanceOf(Date);
    const second = await postJson(leadPath, { click_id: clickId });
    expect(second.body).toEqual(
      badRequest("Customer status cannot be updated to lead. Current status: lead"),
    );
  });

  it("takes a null test_mode as absent, like its other optional fields and the sale's and refund's", async () => {
    const p = await createProgram();
    const clickId = await recordClick(p.links[0]);
    const response = await postJson(
      leadPath,
      { click_id: clickId, additional_data: { test_mode: null, program_id: null } },
      bearer(p.apiKey),
    );
    expect(response.status).toBe(200);
    expect(response.body).toEqual({ success: true, message: "Lead recorded" });
    expect((await leadEventsOfProgram(p.programId))[0]).toMatchObject({ isTest: false });
  });

  it("a lead without customer_key settles a customer without one", async () => {
    const p = await createProgram();
    const clickId = await recordClick(p.links[0]);
    const response = await postJson(leadPath, { click_id: clickId }, bearer(p.apiKey));
    expect(response.status).toBe(200);
    expect((await customersOfProgram(p.programId))[0]).toMatchObject({ customerKey: null, status: "lead" });
  });

  it("answers the status 400 for a converted customer, found by click or by customer_key", async () => {
    const p = await createProgram({ leadAuthPolicy: "browser_allowed" });
    const clickId = await recordClick(p.links[0]);
    await db.insert(customers).values({
      programId: p.programId,
      partnerId: p.partnerIds[0],
      clickId,
      customerKey: "buyer-1",
      status: "converted",
    });
    const converted = badRequest("Customer status cannot be updated to lead. Current status: converted");
    const byClick = await postJson(leadPath, { click_id: clickId }, bearer(p.apiKey));
    expect(byClick.status).toBe(400);
    expect(byClick.body).toEqual(converted);
    const byKey = await postJson(leadPath, { customer_key: "buyer-1" }, bearer(p.apiKey));
    expect(byKey.body).toEqual(converted);
    // The key already belongs to another customer: a new click cannot take it.
    const otherClick = await recordClick(p.links[1]);
    for (const headers of [bearer(p.apiKey), {}]) {
      const taken = await postJson(leadPath, { click_id: otherClick, customer_key: "buyer-1" }, headers);
      expect(taken.status).toBe(400);
      expect(taken.body).toEqual(converted);
    }
    expect(await leadEventsOfProgram(p.programId)).toEqual([]);
    expect(await customersOfProgram(p.programId)).toHaveLength(1);
  });

  it("applies the status rule to provisional leads too", async () => {
    const p = await createProgram();
    const clickId = await recordClick(p.links[0]);
    await db
      .insert(customers)
      .values({ programId: p.programId, partnerId: p.partnerIds[0], clickId, status: "converted" });
    const response = await postJson(leadPath, { click_id: clickId });
    expect(response.body).toEqual(
      badRequest("Customer status cannot be updated to lead. Current status: converted"),
    );
    expect(await leadEventsOfProgram(p.programId)).toEqual([]);
  });

  it("moves an existing customer in status clicked to lead", async () => {
    const p = await createProgram();
    const clickId = await recordClick(p.links[0]);
    const [existing] = await db
      .insert(customers)
      .values({ programId: p.programId, partnerId: p.partnerIds[0], clickId, status: "clicked" })
      .returning();
    const response = await postJson(leadPath, { click_id: clickId, customer_key: "k-1" }, bearer(p.apiKey));
    expect(response.status).toBe(200);
    const [customer, ...more] = await customersOfProgram(p.programId);
    expect(more).toEqual([]);
    expect(customer).toMatchObject({ id: existing?.id, status: "lead", customerKey: "k-1" });
    expect((await leadEventsOfProgram(p.programId))[0]?.customerId).toBe(existing?.id);
  });

  it("binds the customer to the first click's partner, whichever click row the id names", async () => {
    const p = await createProgram({ leadAuthPolicy: "browser_allowed" });
    const original = await recordClick(p.links[0]);
    expect(await recordClick(p.links[1], { visitorClickId: original })).toBe(original);
    const [, second] = await db
      .select()
      .from(clickEvents)
      .where(eq(clickEvents.programId, p.programId))
      .orderBy(clickEvents.id);
    expect(second?.partnerId).toBe(p.partnerIds[1]);
    // The second partner's own row id (never handed to the visitor) resolves to the original click.
    const response = await postJson(leadPath, { click_id: second?.clickId }, bearer(p.apiKey));
    expect(response.status).toBe(200);
    const [customer] = await customersOfProgram(p.programId);
    expect(customer).toMatchObject({ partnerId: p.partnerIds[0], clickId: original });
    const repeat = await postJson(leadPath, { click_id: original });
    expect(repeat.body).toEqual(
      badRequest("Customer status cannot be updated to lead. Current status: lead"),
    );
  });
});

describe("test mode", () => {
  it("records a test lead with the key's program and via_api_key, touching no customer", async () => {
    const p = await createProgram();
    const clickId = await recordClick(p.links[0]);
    await postJson(leadPath, { click_id: clickId, customer_key: "u-1" }); // provisional
    const response = await postJson(
      leadPath,
      {
        click_id: clickId,
        customer_key: "u-1",
        additional_data: { test_mode: true, program_id: p.programId },
      },
      bearer(p.apiKey),
    );
    expect(response.status).toBe(200);
    const events = await leadEventsOfProgram(p.programId);
    expect(response.body).toEqual({
      success: true,
      message: "Test lead recorded",
      data: { eventId: events[1]?.id, programId: p.programId, test_mode: true },
    });
    expect(events[1]).toMatchObject({
      isTest: true,
      viaApiKey: true,
      provisional: false,
      settledAt: null,
      customerId: null,
      clickId,
    });
    expect(events[0]?.settledAt).toBeNull(); // the test lead settled nothing
    expect(await customersOfProgram(p.programId)).toEqual([]);
  });

  it("without a key: additional_data.program_id, else program_id, else the click's program", async () => {
    const [p, q, r] = await Promise.all([createProgram(), createProgram(), createProgram()]);
    const clickOfR = await recordClick(r.links[0]);
    const cases = [
      { body: { additional_data: { test_mode: true, program_id: p.programId } }, programId: p.programId },
      { body: { program_id: q.programId, additional_data: { test_mode: true } }, programId: q.programId },
      { body: { click_id: clickOfR, additional_data: { test_mode: true } }, programId: r.programId },
    ];
    for (const { body, programId } of cases) {
      const response = await postJson(leadPath, body);
      expect(response.status).toBe(200);
      const [event] = await leadEventsOfProgram(programId);
      expect(response.body).toEqual({
        success: true,
        message: "Test lead recorded",
        data: { eventId: event?.id, programId, test_mode: true },
      });
      expect(event).toMatchObject({ isTest: true, viaApiKey: false });
      expect(await customersOfProgram(programId)).toEqual([]);
    }
  });

  it("a test API key records a test lead even without test_mode", async () => {
    const p = await createProgram();
    const clickId = await recordClick(p.links[0]);
    const response = await postJson(leadPath, { click_id: clickId }, bearer(p.testApiKey));
    expect(response.status).toBe(200);
    expect(response.body.data).toMatchObject({ programId: p.programId, test_mode: true });
    expect((await leadEventsOfProgram(p.programId))[0]).toMatchObject({ isTest: true, viaApiKey: true });
    expect(await customersOfProgram(p.programId)).toEqual([]);
  });
});

describe("email", () => {
  it("is stored only as a hash of the normalised address and a masked form", async () => {
    const p = await createProgram();
    const clickId = await recordClick(p.links[0]);
    const clear = "  Jane.Doe@Example.COM ";
    const response = await postJson(
      leadPath,
      { click_id: clickId, customer_key: "jd", email: clear },
      bearer(p.apiKey),
    );
    expect(response.status).toBe(200);
    const hash = await sha256Hex("jane.doe@example.com");
    const [customer] = await customersOfProgram(p.programId);
    const [event] = await leadEventsOfProgram(p.programId);
    for (const row of [customer, event]) {
      expect(row).toMatchObject({ emailHash: hash, emailMasked: "j***@example.com" });
      expect(JSON.stringify(row).toLowerCase()).not.toContain("jane.doe@example.com");
    }
    const raw = await db.execute(
      sql`select row_to_json(c)::text as row from customers c where program_id = ${p.programId}`,
    );
    expect(JSON.stringify(raw.rows).toLowerCase()).not.toContain("jane.doe");
  });
});

describe("key rotation notice", () => {
  it("adds Deprecation, Sunset, Link and warnings while the key still works", async () => {
    const p = await createProgram();
    const markedAt = new Date("2026-01-15T10:00:00.000Z");
    const rotateBy = new Date(Date.now() + 7 * 86_400_000);
    rotateBy.setUTCMilliseconds(0);
    const key = await addKey(p.programId, { markedAt, rotateBy });
    const clickId = await recordClick(p.links[0]);
    const response = await postJson(leadPath, { click_id: clickId }, bearer(key));
    expect(response.status).toBe(200);
    expect(response.headers.get("Deprecation")).toBe(`@${Math.floor(markedAt.getTime() / 1000)}`);
    expect(response.headers.get("Sunset")).toBe(rotateBy.toUTCString());
    expect(response.headers.get("Link")).toBe(`<${docsUrl}>; rel="deprecation"`);
    expect(response.headers.get("X-RateLimit-Limit")).toBe("30");
    expect(response.body).toEqual({
      success: true,
      message: "Lead recorded",
      warnings: [
        {
          code: "api_key_rotation_required",
          message: expect.any(String),
          hint: expect.any(String),
          rotate_by: rotateBy.toISOString(),
          docs_url: docsUrl,
        },
      ],
    });
    // On an error answered with that key, too.
    const again = await postJson(leadPath, { click_id: clickId }, bearer(key));
    expect(again.status).toBe(400);
    expect(again.headers.get("Deprecation")).toBe(`@${Math.floor(markedAt.getTime() / 1000)}`);
    expect(again.body).toMatchObject({
      data: null,
      error: { message: "Customer status cannot be updated to lead. Current status: lead" },
      warnings: [{ code: "api_key_rotation_required" }],
    });
  });

  it("adds nothing for a key not marked for rotation", async () => {
    const p = await createProgram();
    const clickId = await recordClick(p.links[0]);
    const response = await postJson(leadPath, { click_id: clickId }, bearer(p.apiKey));
    expect(response.headers.get("Deprecation")).toBeNull();
    expect(response.body.warnings).toBeUndefined();
  });
});

describe("rate limit", () => {
  it("allows 30 leads per minute per IP, then answers 429", async () => {
    for (let attempt = 0; attempt < 3; attempt++) {
      const ip = freshIp();
      const responses = [];
      for (let i = 0; i < 31; i++) responses.push(await postJson(leadPath, {}, { "CF-Connecting-IP": ip }));
      if (new Set(responses.map((r) => r.headers.get("X-RateLimit-Reset"))).size !== 1) continue;
      responses.slice(0, 30).forEach((response, index) => {
        expect(response.status).toBe(400);
        expect(response.headers.get("X-RateLimit-Limit")).toBe("30");
        expect(response.headers.get("X-RateLimit-Remaining")).toBe(String(29 - index));
      });
      const refused = responses[30]!;
      expect(refused.status).toBe(429);
      expect(refused.body).toMatchObject({ error: { status: 429, code: "rate_limited" } });
      expect(Number(refused.headers.get("Retry-After"))).toBeGreaterThanOrEqual(1);
      return;
    }
    throw new Error("the rate-limit window rolled over in three bursts in a row");
  });
});

describe("CORS for browser leads", () => {
  it("lets the program's own origin read the answer, not another program's", async () => {
    const p = await createProgram();
    const other = await createProgram();
    const clickId = await recordClick(p.links[0]);
    const own = await postJson(leadPath, { click_id: clickId }, { Origin: p.origin });
    expect(own.status).toBe(200);
    expect(own.headers.get("Access-Control-Allow-Origin")).toBe(p.origin);
    expect(own.headers.get("Access-Control-Expose-Headers")).toContain("X-RateLimit-Limit");
    const foreign = await postJson(leadPath, { click_id: clickId }, { Origin: other.origin });
    expect(foreign.status).toBe(200);
    expect(foreign.headers.get("Access-Control-Allow-Origin")).toBeNull();
  });

  it("grants the preflight to an origin a program allows", async () => {
    const p = await createProgram();
    const response = await SELF.fetch(`https://api.test${leadPath}`, {
      method: "OPTIONS",
      headers: {
        Origin: p.origin,
        "Access-Control-Request-Method": "POST",
        "Access-Control-Request-Headers": "content-type",
      },
    });
    expect(response.status).toBe(204);
    expect(response.headers.get("Access-Control-Allow-Origin")).toBe(p.origin);
    expect(response.headers.get("Access-Control-Allow-Methods")).toContain("POST");
  });
});

describe("test clicks", () => {
  it("never settles a test click's customer", async () => {
    const p = await createProgram({ leadAuthPolicy: "browser_allowed" });
    const testClick = await recordClick(p.links[0], { testMode: true });
    const response = await postJson(leadPath, { click_id: testClick, additional_data: { test_mode: true } });
    expect(response.status).toBe(200);
    expect(await customersOfProgram(p.programId)).toEqual([]);
    const rows = await db.select().from(leadEvents).where(eq(leadEvents.clickId, testClick));
    expect(rows).toHaveLength(1);
    expect(rows[0]?.isTest).toBe(true);
  });
});
