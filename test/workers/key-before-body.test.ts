import { eq } from "drizzle-orm";
import { beforeAll, describe, expect, it } from "vitest";
import { programApiKeys } from "../../schema/index.ts";
import { useFaultSwitch } from "./fault-switch.ts";
import { createProgram, db, type ProgramFixture, postJson } from "./harness.ts";
import { salesOf } from "./sale-harness.ts";

/**
 * Spec sections 5 and 7: a missing, malformed, unknown or retired key answers 401, and a retired key on "every
 * request". The sale, the keyed lead and the command line's test event check the key in their read, after the
 * body's schema; a body refused before that read must not hide a bad key (`lib/http/key-before-body-refusal.ts`).
 * A key that authenticates keeps the body's 400.
 */
const faults = useFaultSwitch();
const platform = (status: number, name: string, message: string, code?: string) => ({
  data: null,
  error: { status, name, message, details: {}, ...(code ? { code } : {}) },
});
const retired = {
  error: {
    code: "api_key_rotation_required",
    message: "This API key was retired after its rotation deadline.",
    hint: expect.any(String),
    docs_url: expect.stringMatching(/^https:\/\//),
  },
};

let p: ProgramFixture;
let retiredProgram: ProgramFixture;
let markedProgram: ProgramFixture;
const rotateBy = new Date(Math.floor(Date.now() / 1000) * 1000 + 7 * 86_400_000);
beforeAll(async () => {
  [p, retiredProgram, markedProgram] = await Promise.all([createProgram(), createProgram(), createProgram()]);
  await db
    .update(programApiKeys)
    .set({ rotationMarkedAt: new Date(Date.now() - 86_400_000), rotateBy })
    .where(eq(programApiKeys.programId, markedProgram.programId));
  await db
    .update(programApiKeys)
    .set({ rotationMarkedAt: new Date(Date.now() - 86_400_000), rotateBy: new Date(Date.now() - 1000) })
    .where(eq(programApiKeys.programId, retiredProgram.programId));
});

type Key = "valid" | "unknown" | "retired" | "basic" | "none";
const authorization = (key: Key): Record<string, string> => {
  switch (key) {
    case "valid":
      return { Authorization: `Bearer ${p.apiKey}` };
    case "unknown":
      return { Authorization: "Bearer sk_live_matches_no_program" };
    case "retired":
      return { Authorization: `Bearer ${retiredProgram.apiKey}` };
    case "basic":
      return { Authorization: "Basic abc" };
    case "none":
      return {};
  }
};

const cliInvalidKey =
  "Invalid API key. Check the key in your project config; a workspace owner can regenerate it in the program settings.";

const cases: Array<{
  route: "sale" | "lead" | "cli/test-event";
  body: string;
  key: Key;
  status: number;
  expected: () => unknown;
}> = [
  // Sale: every body refusal before the read, under each key.
  {
    route: "sale",
    body: JSON.stringify({ transaction_id: 5, amount_cents: 100 }),
    key: "unknown",
    status: 401,
    expected: () => platform(401, "UnauthorizedError", "Invalid API token", "unauthorized"),
  },
  {
    route: "sale",
    body: JSON.stringify({ transaction_id: 5, amount_cents: 100 }),
    key: "retired",
    status: 401,
    expected: () => retired,
  },
  {
    route: "sale",
    body: "{not json",
    key: "unknown",
    status: 401,
    expected: () => platform(401, "UnauthorizedError", "Invalid API token", "unauthorized"),
  },
  { route: "sale", body: "{not json", key: "retired", status: 401, expected: () => retired },
  {
    route: "sale",
    body: JSON.stringify({ transaction_id: "t\u0000x", amount_cents: 100 }),
    key: "unknown",
    status: 401,
    expected: () => platform(401, "UnauthorizedError", "Invalid API token", "unauthorized"),
  },
  {
    route: "sale",
    body: JSON.stringify({ transaction_id: 5, amount_cents: 100 }),
    key: "valid",
    status: 400,
    expected: () =>
      platform(400, "BadRequestError", "transaction_id is required and must be a string", "invalid_request"),
  },
  {
    route: "sale",
    body: "{not json",
    key: "valid",
    status: 400,
    expected: () => platform(400, "BadRequestError", "Malformed JSON in request body", "invalid_request"),
  },
  // Lead: server mode (a Bearer token) and a header that is not Bearer answer the key's 401 ...
  {
    route: "lead",
    body: JSON.stringify({ click_id: 5 }),
    key: "unknown",
    status: 401,
    expected: () => platform(401, "UnauthorizedError", "Invalid API token"),
  },
  {
    route: "lead",
    body: JSON.stringify({ click_id: 5 }),
    key: "retired",
    status: 401,
    expected: () => retired,
  },
  { route: "lead", body: JSON.stringify({}), key: "retired", status: 401, expected: () => retired },
  { route: "lead", body: "[1", key: "retired", status: 401, expected: () => retired },
  {
    route: "lead",
    body: JSON.stringify({ click_id: 5 }),
    key: "basic",
    status: 401,
    expected: () =>
      platform(
        401,
        "UnauthorizedError",
        "Missing or malformed Authorization header. Expected: Bearer <token>",
      ),
  },
  // ... browser mode and a key that authenticates keep the body's 400.
  {
    route: "lead",
    body: JSON.stringify({ click_id: 5 }),
    key: "none",
    status: 400,
    expected: () => platform(400, "BadRequestError", "click_id must be a string"),
  },
  {
    route: "lead",
    body: JSON.stringify({ click_id: 5 }),
    key: "valid",
    status: 400,
    expected: () => platform(400, "BadRequestError", "click_id must be a string"),
  },
  {
    route: "lead",
    body: "[1",
    key: "valid",
    status: 400,
    expected: () => platform(400, "BadRequestError", "Malformed JSON in request body"),
  },
  // The command line's test event: an unknown event_type is refused before its read too.
  {
    route: "cli/test-event",
    body: JSON.stringify({ event_type: "refund" }),
    key: "unknown",
    status: 401,
    expected: () => platform(401, "UnauthorizedError", cliInvalidKey),
  },
  {
    route: "cli/test-event",
    body: JSON.stringify({ event_type: "refund" }),
    key: "retired",
    status: 401,
    expected: () => retired,
  },
  {
    route: "cli/test-event",
    body: JSON.stringify({ event_type: "refund" }),
    key: "valid",
    status: 400,
    expected: () => platform(400, "BadRequestError", "Invalid event_type: refund. Valid: click, lead, sale"),
  },
];

const pathOf = (route: string) => (route.startsWith("cli/") ? `/api/v1/${route}` : `/api/v1/track/${route}`);

describe("a refused body does not hide a bad key (sale, lead, command-line test event)", () => {
  it.each(cases.map((c) => [`${c.route}, ${c.key} key, body ${c.body}`, c] as const))(
    "%s",
    async (_name, c) => {
      const response = await postJson(pathOf(c.route), c.body, authorization(c.key));
      expect(response.status).toBe(c.status);
      expect(response.body).toEqual(c.expected());
      // Like every answer of these routes, the 401 that replaced a 400 included.
      expect(response.headers.get("X-Request-ID")).toMatch(/^req_/);
      expect(response.headers.get("X-RateLimit-Limit")).toMatch(/^\d+$/);
      expect(response.headers.get("Content-Type")).toMatch(/^application\/json/);
    },
  );

  it("a key marked for rotation keeps the body's 400, with the rotation notice every answer to it carries", async () => {
    const response = await postJson(
      "/api/v1/track/sale",
      JSON.stringify({ transaction_id: 5, amount_cents: 100 }),
      {
        Authorization: `Bearer ${markedProgram.apiKey}`,
      },
    );
    expect(response.status).toBe(400);
    expect(response.body).toMatchObject({
      data: null,
      error: {
        status: 400,
        message: "transaction_id is required and must be a string",
        code: "invalid_request",
      },
      warnings: [{ code: "api_key_rotation_required", rotate_by: rotateBy.toISOString() }],
    });
    expect(response.headers.get("Sunset")).toBe(rotateBy.toUTCString());
    expect(response.headers.get("Deprecation")).toMatch(/^@\d+$/);
  });

  it("when the key's own read fails, the body's 400 stands (not a retryable 500)", async () => {
    for (const key of ["valid", "unknown"] as const) {
      await faults.arm({ mode: "error" });
      const response = await postJson(
        "/api/v1/track/sale",
        JSON.stringify({ transaction_id: 5, amount_cents: 100 }),
        authorization(key),
      );
      expect((await faults.clear()).fired, "the key's read failed").toBe(1);
      expect(response.status).toBe(400);
      expect(response.body).toEqual(
        platform(
          400,
          "BadRequestError",
          "transaction_id is required and must be a string",
          "invalid_request",
        ),
      );
    }
  });

  it("records nothing for the refused requests", async () => {
    expect(await salesOf(p.programId)).toHaveLength(0);
    expect(await salesOf(retiredProgram.programId)).toHaveLength(0);
    expect(await salesOf(markedProgram.programId)).toHaveLength(0);
  });
});
