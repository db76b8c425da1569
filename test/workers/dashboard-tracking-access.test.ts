import { eq } from "drizzle-orm";
import { beforeAll, describe, expect, it } from "vitest";
import { PROGRAM_KEY_REFUSED } from "../../lib/http/require-session.ts";
import { users } from "../../schema/index.ts";
import {
  anotherToken,
  call,
  callRoute,
  dashboardRoutes,
  expireToken,
  type Person,
  type ProgramFixture,
  programOf,
  setMembershipStatus,
  signInPerson,
} from "./dashboard-tracking-helpers.ts";
import { createProgram, db } from "./harness.ts";

const names = { 400: "BadRequestError", 401: "UnauthorizedError", 403: "ForbiddenError" } as const;

function platform(status: 400 | 401 | 403, message: string, extra: { code?: string; details?: object } = {}) {
  return {
    data: null,
    error: {
      status,
      name: names[status],
      message,
      details: extra.details ?? {},
      ...(extra.code ? { code: extra.code } : {}),
    },
  };
}

const ACCESS_REFUSED = "You do not have access to this program";

let owner: Person;
let program: ProgramFixture;
let foreignProgram: ProgramFixture;

beforeAll(async () => {
  owner = await signInPerson();
  program = await programOf(owner);
  foreignProgram = await createProgram();
});

describe("dashboard routes: who may call them", () => {
  const refusals: {
    case: string;
    status: 401 | 403;
    message: string;
    details?: object;
    request: () => Promise<{
      auth: { cookie?: string; token?: string; origin?: string | null };
      programId: number;
    }>;
    only?: "POST";
  }[] = [
    {
      case: "no session",
      status: 401,
      message: "Sign-in required",
      request: async () => ({ auth: {}, programId: program.programId }),
    },
    {
      case: "an unknown sign-in token",
      status: 401,
      message: "Invalid or expired sign-in token",
      request: async () => ({ auth: { token: "dst_unknown" }, programId: program.programId }),
    },
    {
      case: "an expired session",
      status: 401,
      message: "Invalid or expired sign-in token",
      request: async () => {
        const person = await signInPerson();
        await expireToken(person.token);
        return { auth: { cookie: person.token }, programId: (await programOf(person)).programId };
      },
    },
    {
      case: "a revoked session (signed out)",
      status: 401,
      message: "Invalid or expired sign-in token",
      request: async () => {
        const person = await signInPerson();
        const programId = (await programOf(person)).programId;
        const out = await call("POST", "/api/v1/auth/sign-out", { token: person.token });
        expect(out.status).toBe(200);
        return { auth: { token: person.token }, programId };
      },
    },
    {
      case: "the program's own API key as Bearer",
      status: 401,
      message: PROGRAM_KEY_REFUSED,
      request: async () => ({ auth: { token: program.apiKey }, programId: program.programId }),
    },
    {
      case: "the program's test key as Bearer",
      status: 401,
      message: PROGRAM_KEY_REFUSED,
      request: async () => ({ auth: { token: program.testApiKey }, programId: program.programId }),
    },
    {
      case: "another workspace's program",
      status: 403,
      message: ACCESS_REFUSED,
      request: async () => ({ auth: { token: owner.token }, programId: foreignProgram.programId }),
    },
    {
      case: "a program that does not exist",
      status: 403,
      message: ACCESS_REFUSED,
      request: async () => ({ auth: { token: owner.token }, programId: 2_147_000_000 }),
    },
    {
      // Well formed, beyond the integer ids: no program, refused as one (it answered 400 "must be a
      // positive integer", on the path and in the body alike).
      case: "a program id beyond 32 bits",
      status: 403,
      message: ACCESS_REFUSED,
      request: async () => ({ auth: { token: owner.token }, programId: 99_999_999_999 }),
    },
    {
      case: "a removed membership",
      status: 403,
      message: ACCESS_REFUSED,
      request: async () => {
        const person = await signInPerson();
        const programId = (await programOf(person)).programId;
        await setMembershipStatus(person, "removed");
        return { auth: { cookie: person.token }, programId };
      },
    },
    {
      case: "an invited (not yet active) membership",
      status: 403,
      message: ACCESS_REFUSED,
      request: async () => {
        const person = await signInPerson();
        const programId = (await programOf(person)).programId;
        await setMembershipStatus(person, "invited");
        return { auth: { token: person.token }, programId };
      },
    },
    {
      case: "a suspended account",
      status: 403,
      message: "Your account has been suspended.",
      details: { code: "ACCOUNT_BLOCKED" },
      request: async () => {
        const person = await signInPerson();
        const programId = (await programOf(person)).programId;
        await db.update(users).set({ blockedAt: new Date() }).where(eq(users.id, person.userId));
        return { auth: { cookie: person.token }, programId };
      },
    },
    {
      case: "a cookie POST without Origin",
      status: 403,
      message: "Cross-site request refused",
      only: "POST",
      request: async () => ({ auth: { cookie: owner.token, origin: null }, programId: program.programId }),
    },
    {
      case: "a cookie POST from another origin",
      status: 403,
      message: "Cross-site request refused",
      only: "POST",
      request: async () => ({
        auth: { cookie: owner.token, origin: "https://evil.example" },
        programId: program.programId,
      }),
    },
  ];

  for (const refusal of refusals) {
    it(`refuses ${refusal.case} on every route`, async () => {
      const { auth, programId } = await refusal.request();
      const routes = dashboardRoutes(programId).filter((r) => !refusal.only || r.method === refusal.only);
      expect(routes.length).toBeGreaterThan(0);
      for (const route of routes) {
        const response = await callRoute(route, auth);
        expect({ route: route.name, status: response.status, body: response.body }).toEqual({
          route: route.name,
          status: refusal.status,
          body: platform(refusal.status, refusal.message, { details: refusal.details }),
        });
        expect(response.headers.get("X-Request-ID")).toBeTruthy();
      }
    });
  }

  it.each([
    ["test", { event_type: "bogus" }],
    ["test", {}],
    ["check-test-events", { events: [] }],
    ["check-test-events", {}],
    ["check-test-events", { events: Array.from({ length: 21 }, () => ({ kind: "click", id: "x" })) }],
  ])(
    "%s: another workspace's program_id is refused (403) before the rest of the body %j is checked",
    async (name, rest) => {
      const response = await call("POST", `/api/tracking/${name}`, {
        token: owner.token,
        body: { program_id: foreignProgram.programId, ...rest },
      });
      expect({ status: response.status, body: response.body }).toEqual({
        status: 403,
        body: platform(403, ACCESS_REFUSED),
      });
    },
  );

  it("lets a member in by cookie and by Bearer sign-in token (a read, and a cookie POST from the same origin)", async () => {
    for (const auth of [{ cookie: owner.token }, { token: owner.token }]) {
      const status = await callRoute(dashboardRoutes(program.programId)[0], auth);
      expect(status.status).toBe(200);
      expect(status.headers.get("X-RateLimit-Limit")).toBe("120");
      const check = await callRoute(dashboardRoutes(program.programId)[5], auth);
      expect(check.status).toBe(200);
    }
  });
});

describe("dashboard routes: validation errors", () => {
  const cases: {
    case: string;
    method: "GET" | "POST";
    path: (id: number) => string;
    body?: (id: number) => unknown;
    parameter: string;
    message: string;
  }[] = [
    ...(["status", "events", "performance", "readiness", "run-verification"] as const).flatMap((name) =>
      ["abc", "0", "-1", "1.5", "99999999999999999", "01"].map((bad) => ({
        case: `${name} with programId ${bad}`,
        method: (name === "run-verification" ? "POST" : "GET") as "GET" | "POST",
        path: () => `/api/tracking/${name}/${bad}`,
        parameter: "programId",
        message: "programId must be a positive integer",
      })),
    ),
    ...(["test", "check-test-events"] as const).flatMap((name) =>
      [undefined, {}, { program_id: "1" }, { program_id: 0 }, { program_id: 1.5 }, [1]].map((body) => ({
        case: `${name} with body ${JSON.stringify(body)}`,
        method: "POST" as const,
        path: () => `/api/tracking/${name}`,
        body: () => body ?? "",
        parameter: Array.isArray(body) || body === undefined ? "body" : "program_id",
        message: "program_id is required and must be a positive integer",
      })),
    ),
    ...[undefined, "refund", "chain", 1].map((eventType) => ({
      case: `test with event_type ${String(eventType)}`,
      method: "POST" as const,
      path: () => "/api/tracking/test",
      body: (id: number) => ({ program_id: id, event_type: eventType }),
      parameter: "event_type",
      message: "event_type must be one of: click, lead, sale",
    })),
    ...[
      undefined,
      [],
      Array.from({ length: 21 }, () => ({ kind: "click", id: "x" })),
      [{ kind: "refund", id: 1 }],
      [{ kind: "click", id: 1 }],
      [{ kind: "sale", id: "1" }],
      [{ kind: "lead", id: 0 }],
      ["click"],
    ].map((events) => ({
      case: `check-test-events with events ${JSON.stringify(events)?.slice(0, 60)}`,
      method: "POST" as const,
      path: () => "/api/tracking/check-test-events",
      body: (id: number) => ({ program_id: id, events }),
      parameter: "events",
      message: "events must be a list of 1 to 20 test events, each {kind, id} as the test route returned it",
    })),
    ...[
      ["kind=view", "kind", "kind must be a comma-separated list of: click, lead, sale, refund."],
      ["kind=", "kind", "kind must be a comma-separated list of: click, lead, sale, refund."],
      ["mode=sandbox", "mode", "mode must be one of: all, live, test."],
      ["limit=0", "limit", "limit must be a whole number from 1 to 100."],
      ["limit=101", "limit", "limit must be a whole number from 1 to 100."],
      ["limit=ten", "limit", "limit must be a whole number from 1 to 100."],
      ["cursor=abc", "cursor", "cursor must be the next_cursor of a previous page."],
      [
        `cursor=${btoa(JSON.stringify(["2026-01-01T00:00:00.000000Z", "view", 1]))}`,
        "cursor",
        "cursor must be the next_cursor of a previous page.",
      ],
      ["page=2", "page", "Unknown parameter page. Known: kind, mode, limit, cursor."],
      ["limit=5&limit=6", "limit", "limit must be given once."],
    ].map(([query, parameter, message]) => ({
      case: `events with ${query}`,
      method: "GET" as const,
      path: (id: number) => `/api/tracking/events/${id}?${query}`,
      parameter: parameter as string,
      message: message as string,
    })),
    ...[
      [
        "timezone=Mars/Base",
        "timezone",
        "timezone must be an IANA time zone name, for example Europe/Paris.",
      ],
      [
        "interval=forever",
        "interval",
        "interval must be one of: today, yesterday, last_7_days, last_30_days, last_90_days, last_365_days, month_to_date, year_to_date.",
      ],
      ["start=2026-01-01", "end", "start and end must be sent together."],
      ["start=2026-02-01&end=2026-01-01", "end", "end must be after start."],
      ["limit=0", "limit", "limit must be a whole number from 1 to 100."],
      [
        "group_by=utm_source",
        "group_by",
        "Unknown parameter group_by. Known: interval, start, end, timezone, limit.",
      ],
      ["interval=today&interval=yesterday", "interval", "interval must be given once."],
    ].map(([query, parameter, message]) => ({
      case: `performance with ${query}`,
      method: "GET" as const,
      path: (id: number) => `/api/tracking/performance/${id}?${query}`,
      parameter: parameter as string,
      message: message as string,
    })),
  ];

  for (const c of cases) {
    it(`answers 400 naming the parameter: ${c.case}`, async () => {
      const response = await call(c.method, c.path(program.programId), {
        token: await anotherToken(owner),
        ...(c.body ? { body: c.body(program.programId) } : {}),
      });
      expect({ status: response.status, body: response.body }).toEqual({
        status: 400,
        body: platform(400, c.message, { details: { parameter: c.parameter } }),
      });
    });
  }

  it("refuses a body over 64 KB with 413 before reading it", async () => {
    for (const path of ["/api/tracking/test", "/api/tracking/check-test-events"]) {
      const response = await call("POST", path, {
        token: await anotherToken(owner),
        body: { program_id: program.programId, event_type: "click", padding: "x".repeat(70_000) },
      });
      expect({ status: response.status, body: response.body }).toEqual({
        status: 413,
        body: {
          data: null,
          error: {
            status: 413,
            name: "PayloadTooLargeError",
            message: "Request body too large (limit 65536 bytes)",
            details: {},
          },
        },
      });
    }
  });

  it("checks the session before the parameters, and membership before the query", async () => {
    const anonymous = await call("GET", "/api/tracking/events/abc");
    expect(anonymous.status).toBe(401);
    const foreign = await call("GET", `/api/tracking/events/${foreignProgram.programId}?mode=sandbox`, {
      token: owner.token,
    });
    expect(foreign.body).toEqual(platform(403, ACCESS_REFUSED));
  });
});
