import { SELF } from "cloudflare:test";
import { eq } from "drizzle-orm";
import { describe, expect, inject, it } from "vitest";
import { sha256Hex } from "../../lib/auth/api-keys.ts";
import { programApiKeys } from "../../schema/programs.ts";
import { users } from "../../schema/workspaces.ts";
import {
  ageSession,
  breakDatabase,
  type CliResponse,
  cli,
  createPerson,
  loginTokenFor,
  markSignedIn,
  startSession,
} from "./cli-harness.ts";
import { createProgram, db, freshIp, unique } from "./harness.ts";
import { obtainIdToken } from "./oidc-sign-in.ts";

/**
 * Every row of the spec's "Command-line endpoint errors" table (section 7): status, envelope, message,
 * `details.code`, and the request-id rules (header everywhere except the 200, 401 and 429 of
 * `GET /api/v1/cli/status`; a 500 repeats the id at the end of the message and in `details.request_id`).
 */
const oidc = inject("oidc");
const cliIdToken = (email: string, verified: boolean) =>
  obtainIdToken(
    { issuer: oidc.issuer, clientId: oidc.cliClientId, redirectUri: "http://127.0.0.1:53682/callback" },
    { email, verified },
  );

const names: Record<number, string> = {
  400: "BadRequestError",
  401: "UnauthorizedError",
  403: "ForbiddenError",
  404: "NotFoundError",
  410: "GoneError",
  500: "InternalServerError",
};

interface Row {
  endpoint: string;
  status: number;
  message: string;
  /** Tells apart rows with the same status and message. */
  case?: string;
  detailsCode?: string;
  call: () => Promise<CliResponse>;
  /** Runs the call with the database unreachable (the 500 rows). */
  failing?: boolean;
  /** `GET status`'s 200/401/429 carry no X-Request-ID. */
  noRequestId?: boolean;
}

const login = (rest = "Run `npx affiliate-tracking-service login` to log in again.") => rest;
const validInit = { name: "Shop", domain: "shop.example", commission_type: "percent", commission_rate: 20 };

async function initWith(body: unknown, token?: string) {
  const t = token ?? (await loginTokenFor((await createPerson()).userId));
  return cli("POST", "/api/v1/cli/init", { token: t, body });
}

async function signedInCallback(email: string, verified: boolean, options: { age?: number } = {}) {
  const { state } = await startSession();
  if (options.age) await ageSession(state, options.age);
  return cli("POST", "/api/v1/cli/auth/callback", {
    body: { state, id_token: await cliIdToken(email, verified) },
  });
}

/** The poll of a session whose sign-in the callback refused (it answered the same 403 first). */
async function pollAfterRefusedCallback(email: string, verified: boolean) {
  const { state } = await startSession();
  const refused = await cli("POST", "/api/v1/cli/auth/callback", {
    body: { state, id_token: await cliIdToken(email, verified) },
  });
  if (refused.status !== 403) throw new Error(`callback answered ${refused.status}`);
  return cli("GET", `/api/v1/cli/auth/poll?state=${encodeURIComponent(state)}`);
}

/** The login token of a person suspended after logging in. */
async function suspendedPersonToken(): Promise<string> {
  const person = await createPerson();
  const token = await loginTokenFor(person.userId);
  await db.update(users).set({ blockedAt: new Date() }).where(eq(users.id, person.userId));
  return token;
}

async function blockedPersonEmail(): Promise<string> {
  return (await createPerson({ blocked: true })).email;
}

/** One row per body: JSON text that is not an object (or, for `test-event`, names no event type). */
function rowsForBodies(
  endpoint: string,
  message: string,
  bodies: string[],
  call: (body: string) => Promise<CliResponse>,
): Row[] {
  return bodies.map((body) => ({
    endpoint,
    status: 400,
    message,
    case: `body ${body}`,
    call: () => call(body),
  }));
}

const rows: Row[] = [
  {
    endpoint: "auth/start",
    status: 500,
    message: "Failed to start auth session",
    failing: true,
    call: () => cli("POST", "/api/v1/cli/auth/start"),
  },
  {
    endpoint: "auth/callback",
    status: 400,
    message: "Missing required fields: state, id_token",
    call: () => cli("POST", "/api/v1/cli/auth/callback", { body: { state: "only-state" } }),
  },
  // A JSON body that is not an object holds none of the fields.
  ...rowsForBodies(
    "auth/callback",
    "Missing required fields: state, id_token",
    ["null", "[]", '"state"'],
    (body) => cli("POST", "/api/v1/cli/auth/callback", { body }),
  ),
  {
    endpoint: "auth/callback",
    status: 404,
    message: "Session not found or already used",
    call: async () =>
      cli("POST", "/api/v1/cli/auth/callback", {
        body: { state: "no-such-state", id_token: await cliIdToken(`${unique("x")}@brand.example`, true) },
      }),
  },
  {
    endpoint: "auth/callback",
    status: 404,
    message: "Session not found or already used",
    call: async () => {
      const person = await createPerson();
      const { state } = await startSession();
      await markSignedIn(state, person.userId);
      return cli("POST", "/api/v1/cli/auth/callback", {
        body: { state, id_token: await cliIdToken(person.email, true) },
      });
    },
  },
  {
    endpoint: "auth/callback",
    status: 400,
    message: "Session expired",
    call: () => signedInCallback(`${unique("late")}@brand.example`, true, { age: 5 * 60 * 1000 + 1000 }),
  },
  {
    endpoint: "auth/callback",
    status: 403,
    message: "Your account has been suspended.",
    detailsCode: "ACCOUNT_BLOCKED",
    call: async () => signedInCallback(await blockedPersonEmail(), true),
  },
  {
    endpoint: "auth/callback",
    status: 403,
    message:
      "Your email address is not verified with your sign-in provider. Verify it there, then try again.",
    detailsCode: "PROVIDER_EMAIL_NOT_VERIFIED",
    // A blocked account with an unverified provider email: the email check comes first.
    call: async () => signedInCallback(await blockedPersonEmail(), false),
  },
  {
    endpoint: "auth/callback",
    status: 500,
    message: "Auth callback failed",
    failing: true,
    call: () => cli("POST", "/api/v1/cli/auth/callback", { body: { state: "s", id_token: "t" } }),
  },
  {
    endpoint: "auth/poll",
    status: 400,
    message: "Missing state parameter",
    call: () => cli("GET", "/api/v1/cli/auth/poll"),
  },
  {
    endpoint: "auth/poll",
    status: 404,
    message: "Session not found",
    call: () => cli("GET", "/api/v1/cli/auth/poll?state=nothing-like-it"),
  },
  {
    endpoint: "auth/poll",
    status: 400,
    message: "Session already consumed",
    call: async () => {
      const { state } = await startSession();
      await markSignedIn(state, (await createPerson()).userId);
      await cli("GET", `/api/v1/cli/auth/poll?state=${state}`);
      return cli("GET", `/api/v1/cli/auth/poll?state=${state}`);
    },
  },
  {
    endpoint: "auth/poll",
    status: 403,
    message: "Your account has been suspended.",
    detailsCode: "ACCOUNT_BLOCKED",
    call: async () => pollAfterRefusedCallback(await blockedPersonEmail(), true),
  },
  {
    endpoint: "auth/poll",
    status: 403,
    message:
      "Your email address is not verified with your sign-in provider. Verify it there, then try again.",
    detailsCode: "PROVIDER_EMAIL_NOT_VERIFIED",
    call: () => pollAfterRefusedCallback(`${unique("unverified")}@brand.example`, false),
  },
  {
    endpoint: "auth/poll",
    status: 500,
    message: "Failed to poll auth session",
    failing: true,
    call: () => cli("GET", "/api/v1/cli/auth/poll?state=abc"),
  },
  {
    endpoint: "init",
    status: 401,
    message: "Authentication required. Run `npx affiliate-tracking-service login` to log in.",
    call: () => cli("POST", "/api/v1/cli/init", { body: validInit }),
  },
  {
    endpoint: "init",
    status: 401,
    message: `Invalid or expired token. ${login()}`,
    call: () => initWith(validInit, "atl_not_a_real_token"),
  },
  {
    endpoint: "init",
    status: 401,
    message: "Authentication required. Run `npx affiliate-tracking-service login` to log in.",
    call: () => cli("POST", "/api/v1/cli/init", { body: "{" }),
  },
  {
    endpoint: "init",
    status: 401,
    message: `Invalid or expired token. ${login()}`,
    call: () => initWith("{", "atl_not_a_real_token"),
  },
  {
    endpoint: "init",
    status: 400,
    message: "Malformed JSON in request body",
    call: () => initWith("{"),
  },
  // A person suspended after logging in: the spec's 403 for a blocked account, as their dashboard token gets.
  {
    endpoint: "init",
    status: 403,
    message: "Your account has been suspended.",
    detailsCode: "ACCOUNT_BLOCKED",
    call: async () => initWith(validInit, await suspendedPersonToken()),
  },
  {
    endpoint: "init",
    status: 403,
    message: "Your account has been suspended.",
    detailsCode: "ACCOUNT_BLOCKED",
    case: "a suspended account's token with a malformed body",
    call: async () => initWith("{", await suspendedPersonToken()),
  },
  {
    endpoint: "init",
    status: 403,
    message: "No advertiser found for this account",
    call: async () =>
      initWith(validInit, await loginTokenFor((await createPerson({ workspace: false })).userId)),
  },
  {
    endpoint: "init",
    status: 403,
    message: "advertiser_id does not match the authenticated account",
    call: async () => {
      const other = await createPerson();
      return initWith({ ...validInit, advertiser_id: other.workspaceId });
    },
  },
  {
    endpoint: "init",
    status: 400,
    message: "Missing required fields: name, domain, commission_type, commission_rate",
    call: () => initWith({ name: "Shop", domain: "shop.example", commission_type: "percent" }),
  },
  ...rowsForBodies(
    "init",
    "Missing required fields: name, domain, commission_type, commission_rate",
    ["null", "[]", "42"],
    (body) => initWith(body),
  ),
  {
    endpoint: "init",
    status: 400,
    message: "Invalid commission_type: bonus. Valid: percent, fixed, recurring_percent, recurring_fixed",
    call: () => initWith({ ...validInit, commission_type: "bonus" }),
  },
  {
    endpoint: "init",
    status: 400,
    message: "commission_rate must be a positive number",
    call: () => initWith({ ...validInit, commission_rate: "20" }),
  },
  {
    endpoint: "init",
    status: 400,
    message: "commission_rate is a percentage for this type and cannot exceed 100",
    call: () => initWith({ ...validInit, commission_type: "recurring_percent", commission_rate: 120 }),
  },
  {
    endpoint: "init",
    status: 400,
    message: "duration_months must be a whole number of months (0 = lifetime)",
    call: () => initWith({ ...validInit, duration_months: 1.5 }),
  },
  {
    endpoint: "init",
    status: 400,
    message: "duration_months must be at most 1200 (0 = lifetime)",
    case: "beyond a hundred years: not the spec's message, which would call 1201 no whole number",
    call: () => initWith({ ...validInit, commission_type: "recurring_percent", duration_months: 1201 }),
  },
  {
    endpoint: "init",
    status: 400,
    message: "commission_rate must be less than 10000000000",
    case: "a fixed rate the column cannot hold",
    call: () => initWith({ ...validInit, commission_type: "fixed", commission_rate: 1e10 }),
  },
  {
    endpoint: "init",
    status: 400,
    message: "cookie_duration must be a whole number of days from 1 to 365",
    call: () => initWith({ ...validInit, cookie_duration: 366 }),
  },
  {
    endpoint: "init",
    status: 500,
    message: "Failed to create program",
    failing: true,
    call: () => cli("POST", "/api/v1/cli/init", { token: "atl_any", body: validInit }),
  },
  {
    endpoint: "programs",
    status: 401,
    message: "Missing Authorization header",
    call: () => cli("GET", "/api/v1/cli/programs"),
  },
  {
    endpoint: "programs",
    status: 401,
    message: "Invalid or expired token",
    call: () => cli("GET", "/api/v1/cli/programs", { token: "atl_nope" }),
  },
  {
    endpoint: "programs",
    status: 403,
    message: "Your account has been suspended.",
    detailsCode: "ACCOUNT_BLOCKED",
    call: async () => cli("GET", "/api/v1/cli/programs", { token: await suspendedPersonToken() }),
  },
  {
    endpoint: "programs",
    status: 500,
    message: "Failed to list programs",
    failing: true,
    call: () => cli("GET", "/api/v1/cli/programs", { token: "atl_any" }),
  },
  ...(["status", "test-event"] as const).flatMap((endpoint): Row[] => {
    const method = endpoint === "status" ? "GET" : "POST";
    const body = endpoint === "status" ? undefined : { event_type: "click" };
    const noRequestId = endpoint === "status";
    const path = `/api/v1/cli/${endpoint}`;
    return [
      {
        endpoint,
        status: 401,
        message: "Missing or malformed Authorization header. Expected: Bearer <api_token>",
        noRequestId,
        call: () => cli(method, path, { body }),
      },
      {
        endpoint,
        status: 401,
        message: "Missing or malformed Authorization header. Expected: Bearer <api_token>",
        noRequestId,
        call: () => cli(method, path, { body, headers: { Authorization: "Token abc" } }),
      },
      {
        endpoint,
        status: 401,
        message: "Missing API token",
        noRequestId,
        call: () => cli(method, path, { body, headers: { Authorization: "Bearer   " } }),
      },
      {
        endpoint,
        status: 401,
        message:
          "Invalid API key. Check the key in your project config; a workspace owner can regenerate it in the program settings.",
        noRequestId,
        call: () => cli(method, path, { body, token: "sk_live_unknown" }),
      },
    ];
  }),
  {
    endpoint: "status",
    status: 500,
    message: "Failed to get status",
    failing: true,
    call: async () => cli("GET", "/api/v1/cli/status", { token: "sk_live_x" }),
  },
  // A body refused before the key is read does not hide a key that does not authenticate.
  ...[{ event_type: "refund" }, {}].map(
    (body): Row => ({
      endpoint: "test-event",
      status: 401,
      message:
        "Invalid API key. Check the key in your project config; a workspace owner can regenerate it in the program settings.",
      call: () => cli("POST", "/api/v1/cli/test-event", { body, token: "sk_live_unknown" }),
    }),
  ),
  {
    endpoint: "test-event",
    status: 400,
    message: "Invalid event_type: refund. Valid: click, lead, sale",
    call: async () =>
      cli("POST", "/api/v1/cli/test-event", {
        token: (await createProgram()).apiKey,
        body: { event_type: "refund" },
      }),
  },
  ...rowsForBodies(
    "test-event",
    "Invalid event_type: undefined. Valid: click, lead, sale",
    ["null", "[]", "{}"],
    async (body) => cli("POST", "/api/v1/cli/test-event", { token: (await createProgram()).apiKey, body }),
  ),
  {
    endpoint: "test-event",
    status: 500,
    message: "Failed to run synthetic chain",
    failing: true,
    call: () => cli("POST", "/api/v1/cli/test-event", { token: "sk_live_x", body: { type: "chain" } }),
  },
  {
    endpoint: "test-event",
    status: 500,
    message: "Failed to process test event",
    failing: true,
    call: () => cli("POST", "/api/v1/cli/test-event", { token: "sk_live_x", body: { event_type: "sale" } }),
  },
  {
    endpoint: "stripe-connect",
    status: 410,
    message:
      "This endpoint is retired. Connect your payments provider account from the dashboard: program settings, Payments.",
    call: () => cli("POST", "/api/v1/cli/stripe-connect", { body: {} }),
  },
  ...(["GET", "PUT", "PATCH", "DELETE"] as const).map((method) => ({
    endpoint: "stripe-connect",
    case: `${method}: retired whatever the method`,
    status: 410,
    message:
      "This endpoint is retired. Connect your payments provider account from the dashboard: program settings, Payments.",
    call: () => cli(method, "/api/v1/cli/stripe-connect"),
  })),
];

describe("command-line endpoint errors (spec section 7), row by row", () => {
  it.each(
    rows.map(
      (row) =>
        [`${row.endpoint} ${row.status} ${row.message}${row.case ? ` (${row.case})` : ""}`, row] as const,
    ),
  )("%s", async (_, row) => {
    let restore: (() => void) | undefined;
    let response: CliResponse;
    try {
      if (row.failing) restore = breakDatabase();
      response = await row.call();
    } finally {
      restore?.();
    }
    expect(response.status).toBe(row.status);
    const requestId = response.headers.get("X-Request-ID");
    if (row.noRequestId) expect(requestId).toBeNull();
    else expect(requestId).toMatch(/^req_/);
    const message = row.status === 500 ? `${row.message} (request_id: ${requestId})` : row.message;
    const details: Record<string, unknown> = {
      ...(row.detailsCode ? { code: row.detailsCode } : {}),
      ...(row.status === 500 ? { request_id: requestId } : {}),
    };
    expect(response.body).toEqual({
      data: null,
      error: { status: row.status, name: names[row.status], message, details },
    });
    expect(response.headers.get("X-RateLimit-Limit")).toBe("60");
  });

  it("a retired program key: typed 401 api_key_rotation_required on status (no request id) and test-event", async () => {
    const p = await createProgram();
    await db
      .update(programApiKeys)
      .set({ rotationMarkedAt: new Date(Date.now() - 86_400_000), rotateBy: new Date(Date.now() - 1000) })
      .where(eq(programApiKeys.keyHash, await sha256Hex(p.apiKey)));
    for (const [method, path, body] of [
      ["GET", "/api/v1/cli/status", undefined],
      ["POST", "/api/v1/cli/test-event", { type: "chain" }],
    ] as const) {
      const answer = await cli(method, path, { token: p.apiKey, body });
      expect(answer.status).toBe(401);
      expect(answer.body).toEqual({
        error: {
          code: "api_key_rotation_required",
          message: expect.any(String),
          hint: expect.any(String),
          docs_url: expect.any(String),
        },
      });
      if (method === "GET") expect(answer.headers.get("X-Request-ID")).toBeNull();
      else expect(answer.headers.get("X-Request-ID")).toMatch(/^req_/);
    }
  });

  it("the status path's other methods keep X-Request-ID: the spec's exception names GET only", async () => {
    const p = await createProgram();
    for (const method of ["POST", "PUT", "DELETE", "PATCH"] as const) {
      const keyless = await cli(method, "/api/v1/cli/status");
      expect([method, keyless.status]).toEqual([method, 401]);
      expect(keyless.headers.get("X-Request-ID")).toMatch(/^req_/);
      expect(keyless.headers.get("X-RateLimit-Limit")).toBe("60");
      const keyed = await cli(method, "/api/v1/cli/status", { token: p.apiKey });
      expect([method, keyed.status]).toEqual([method, 404]);
      expect(keyed.headers.get("X-Request-ID")).toMatch(/^req_/);
    }
    const head = await SELF.fetch("https://api.test/api/v1/cli/status", {
      method: "HEAD",
      headers: { Authorization: `Bearer ${p.apiKey}`, "CF-Connecting-IP": freshIp() },
    });
    expect(head.status).toBe(200);
    expect(head.headers.get("X-Request-ID")).toBeNull();
  });

  it("a path of the family no route has: 404 with the family's X-RateLimit-* headers, each call counted once", async () => {
    const ip = freshIp();
    const remaining: number[] = [];
    for (const [method, path] of [
      ["GET", "/api/v1/cli/nope"],
      ["POST", "/api/v1/cli/stripe-connect/callback"],
      ["GET", "/api/v1/cli/"],
      // A known path's other method: its route's limiter counts it, the family's does not again.
      ["GET", "/api/v1/cli/init"],
      ["GET", "/api/v1/cli/nope"],
    ] as const) {
      const answer = await cli(method, path, { ip });
      expect([method, path, answer.status]).toEqual([method, path, 404]);
      expect(answer.body).toEqual({
        data: null,
        error: { status: 404, name: "NotFoundError", message: "Not found", details: {} },
      });
      expect(answer.headers.get("X-Request-ID")).toMatch(/^req_/);
      expect(answer.headers.get("X-RateLimit-Limit")).toBe("60");
      expect(answer.headers.get("X-RateLimit-Reset")).toMatch(/^\d+$/);
      remaining.push(Number(answer.headers.get("X-RateLimit-Remaining")));
    }
    // One bucket (the caller's IP, no token sent), one count per call, unless its window rolled over meanwhile.
    const steps = remaining.slice(1).map((r, i) => (remaining[i] as number) - r);
    expect(steps.every((step) => step === 1 || step < 0)).toBe(true);
  });

  it("rate limit: 60 per minute per key; status's 429 has no request id, Retry-After in seconds", async () => {
    // A fixed window can roll over mid-run: then the run is retried with a new key, so the assertions
    // always see one whole window. The key's first call counts in its own bucket like every later one.
    let ip = "";
    for (let attempt = 0; ; attempt++) {
      const p = await createProgram();
      ip = freshIp();
      const responses = [];
      for (let i = 0; i < 61; i++)
        responses.push(await cli("GET", "/api/v1/cli/status", { token: p.apiKey, ip }));
      const windows = new Set(responses.map((r) => r.headers.get("X-RateLimit-Reset")));
      if (windows.size !== 1 && attempt < 2) continue;
      expect(responses.slice(0, 60).map((r) => r.status)).toEqual(Array(60).fill(200));
      const limited = responses[60]!;
      expect(limited.status).toBe(429);
      expect(limited.body).toMatchObject({
        error: { status: 429, code: "rate_limited", retry_after_seconds: expect.any(Number) },
      });
      expect(limited.headers.get("X-Request-ID")).toBeNull();
      expect(Number(limited.headers.get("Retry-After"))).toBeGreaterThan(0);
      expect(limited.headers.get("X-RateLimit-Remaining")).toBe("0");
      break;
    }
    // Another key has its own bucket, from the same IP.
    expect(
      (await cli("GET", "/api/v1/cli/status", { token: (await createProgram()).apiKey, ip })).status,
    ).toBe(200);
  });
});
