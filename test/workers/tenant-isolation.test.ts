import { SELF } from "cloudflare:test";
import { sql } from "drizzle-orm";
import { beforeAll, describe, expect, it } from "vitest";
import { createApp } from "../../functions/api/app.ts";
import { cli, loginTokenFor } from "./cli-harness.ts";
import {
  anotherToken,
  BASE,
  call,
  type LooseJson,
  type Person,
  programOf,
  SAME_ORIGIN,
  signInPerson,
} from "./dashboard-tracking-helpers.ts";
import { db, freshIp, type ProgramFixture, postJson } from "./harness.ts";
import { addMember } from "./program-admin-harness.ts";
import { click, sale, txn } from "./sale-harness.ts";

/**
 * Tenant isolation (README "Tenant isolation"): tenant B (its own program key, sign-in session and login
 * token) and a removed member of A's workspace attack every route with tenant A's program ids, click ids,
 * customer keys, transaction ids and link ids. For each: the answer the table names, no id or key of A in
 * the answer, and, after the whole matrix, not one row of A changed.
 */

interface Victim {
  person: Person;
  program: ProgramFixture;
  clickId: string;
  customerKey: string;
  transactionId: string;
  saleId: number;
  commissionId: number;
  linkId: number;
  webhookEndpointId: number;
}

let a: Victim;
let b: { person: Person; program: ProgramFixture; loginToken: string };
/** Signed in, once a member of A's workspace, now removed. */
let removed: Person;

type Answer = { status: number; body: LooseJson };
type Attack = "B's program key" | "B's sign-in session" | "removed member's session" | "B's login token";

interface Row {
  route: string;
  attack: Attack;
  call: () => Promise<Answer>;
  status: number;
  /** For a 200: what the answer holds is the attacker's own (checked beyond "nothing of A"). */
  own?: (body: LooseJson) => void;
  /** For a refusal: the platform envelope's message (and code, on sale and refund; details when not empty). */
  error?: { message: string; code?: string; details?: () => Record<string, unknown> };
  /** A's strings the answer may hold: those the attacker itself sent, or an id the spec makes it name. */
  echoes?: () => string[];
}

const bearer = (key: string) => ({ Authorization: `Bearer ${key}` });

/** A fresh sign-in token per row: the write routes allow 20 calls a minute per token. */
async function session(person: Person): Promise<string> {
  return anotherToken(person);
}

function dashboard(method: string, path: string, who: () => Person, body?: unknown) {
  return async () =>
    call(method, path, {
      token: await session(who()),
      origin: SAME_ORIGIN,
      ...(body === undefined ? {} : { body }),
    });
}

/** Every route of A's program a signed-in person could aim at, with valid bodies. */
function programRoutes(attack: Attack, who: () => Person): Row[] {
  const base = () => `/api/v1/programs/${a.program.programId}`;
  const rows: Array<[string, string, () => string, (() => unknown)?]> = [
    ["GET /api/v1/programs/:id/settings", "GET", () => `${base()}/settings`],
    [
      "PATCH /api/v1/programs/:id/settings",
      "PATCH",
      () => `${base()}/settings`,
      () => ({ name: "taken over" }),
    ],
    [
      "POST /api/v1/programs/:id/api-keys/regenerate",
      "POST",
      () => `${base()}/api-keys/regenerate`,
      () => ({}),
    ],
    [
      "POST /api/v1/programs/:id/partners",
      "POST",
      () => `${base()}/partners`,
      () => ({ name: "Mallory", email: "mallory@attacker.example" }),
    ],
    ["GET /api/v1/programs/:id/links", "GET", () => `${base()}/links`],
    [
      "POST /api/v1/programs/:id/links",
      "POST",
      () => `${base()}/links`,
      () => ({ partner_id: a.program.partnerIds[0], short_link: "mallory-link" }),
    ],
    [
      "PATCH /api/v1/programs/:id/links/:linkId",
      "PATCH",
      () => `${base()}/links/${a.linkId}`,
      () => ({ active: false }),
    ],
    ["GET /api/v1/programs/:id/stripe-connect", "GET", () => `${base()}/stripe-connect`],
    ["GET /api/tracking/status/:programId", "GET", () => `/api/tracking/status/${a.program.programId}`],
    ["GET /api/tracking/events/:programId", "GET", () => `/api/tracking/events/${a.program.programId}`],
    [
      "GET /api/tracking/performance/:programId",
      "GET",
      () => `/api/tracking/performance/${a.program.programId}`,
    ],
    ["GET /api/tracking/readiness/:programId", "GET", () => `/api/tracking/readiness/${a.program.programId}`],
    [
      "POST /api/tracking/test",
      "POST",
      () => "/api/tracking/test",
      () => ({ program_id: a.program.programId, event_type: "click" }),
    ],
    [
      "POST /api/tracking/check-test-events",
      "POST",
      () => "/api/tracking/check-test-events",
      () => ({ program_id: a.program.programId, events: [{ kind: "click", id: a.clickId }] }),
    ],
    [
      "POST /api/tracking/run-verification/:programId",
      "POST",
      () => `/api/tracking/run-verification/${a.program.programId}`,
    ],
    ["GET /api/v1/programs/:id/webhooks", "GET", () => `${base()}/webhooks`],
    [
      "POST /api/v1/programs/:id/webhooks",
      "POST",
      () => `${base()}/webhooks`,
      () => ({ url: "https://hooks.attacker.example/steal", events: ["sale.created"] }),
    ],
    [
      "PATCH /api/v1/programs/:id/webhooks/:endpointId",
      "PATCH",
      () => `${base()}/webhooks/${a.webhookEndpointId}`,
      () => ({ url: "https://hooks.attacker.example/steal" }),
    ],
    [
      "DELETE /api/v1/programs/:id/webhooks/:endpointId",
      "DELETE",
      () => `${base()}/webhooks/${a.webhookEndpointId}`,
    ],
    [
      "POST /api/v1/programs/:id/webhooks/:endpointId/rotate-secret",
      "POST",
      () => `${base()}/webhooks/${a.webhookEndpointId}/rotate-secret`,
      () => ({}),
    ],
    [
      "POST /api/v1/programs/:id/webhooks/:endpointId/test",
      "POST",
      () => `${base()}/webhooks/${a.webhookEndpointId}/test`,
    ],
    [
      "GET /api/v1/programs/:id/webhooks/:endpointId/attempts",
      "GET",
      () => `${base()}/webhooks/${a.webhookEndpointId}/attempts`,
    ],
    ["GET /api/v1/programs/:id/commissions/held", "GET", () => `${base()}/commissions/held`],
    [
      "POST /api/v1/programs/:id/commissions/:commissionId/review",
      "POST",
      () => `${base()}/commissions/${a.commissionId}/review`,
      () => ({ decision: "approve" }),
    ],
  ];
  return [
    ...rows.map(([route, method, path, body]) => ({
      route,
      attack,
      // Bodies naming A's program are built when the row runs (A exists only then).
      call: async () => dashboard(method, path(), who, body?.())(),
      status: 403,
      error: { message: "You do not have access to this program" },
    })),
    {
      route: "GET /dashboard",
      attack,
      // The page answers HTML: its refusal is the 403 page, and its text is scanned like any answer.
      call: async () => {
        const response = await SELF.fetch(`${BASE}/dashboard?program=${a.program.programId}`, {
          headers: {
            Cookie: `__Host-affiliate_session=${await session(who())}`,
            "CF-Connecting-IP": freshIp(),
          },
          redirect: "manual",
        });
        return { status: response.status, body: { page: await response.text() } };
      },
      status: 403,
    },
  ];
}

const rows: Row[] = [
  // ---- Tracking with B's program key and A's identifiers ----
  {
    route: "POST /api/v1/track/sale",
    attack: "B's program key",
    call: () => sale(b.program, { transaction_id: a.transactionId, amount_cents: 1000, click_id: a.clickId }),
    // Live payment ids are one namespace (a payment is one sale, whoever reports it): 409 with the recorded
    // sale's id, as spec section 7 words every 409 of the sale. That bare integer is the one id of A it may name.
    status: 409,
    error: {
      message: "Duplicate transaction_id. This sale has already been recorded.",
      code: "duplicate_transaction",
      details: () => ({ sale_id: a.saleId }),
    },
    echoes: () => [String(a.saleId)],
  },
  {
    route: "POST /api/v1/track/sale",
    attack: "B's program key",
    call: () => sale(b.program, { transaction_id: txn(), amount_cents: 1000, customer_key: a.customerKey }),
    status: 400,
    error: { message: "Customer not found. Provide customer_key or click_id.", code: "no_attribution" },
  },
  {
    route: "POST /api/v1/track/refund",
    attack: "B's program key",
    call: () =>
      postJson("/api/v1/track/refund", { transaction_id: a.transactionId }, bearer(b.program.apiKey)),
    status: 404,
    error: { message: "Sale not found for transaction_id", code: "not_found" },
  },
  {
    route: "POST /api/v1/track/lead",
    attack: "B's program key",
    call: () =>
      postJson(
        "/api/v1/track/lead",
        { click_id: a.clickId, customer_key: a.customerKey },
        bearer(b.program.apiKey),
      ),
    status: 400,
    error: { message: "Customer does not belong to this program" },
  },
  {
    route: "POST /api/v1/track/lead",
    attack: "B's program key",
    // Browser mode naming B's program with A's click.
    call: () => postJson("/api/v1/track/lead", { click_id: a.clickId, program_id: b.program.programId }),
    status: 400,
    error: { message: "Customer not found. Provide a valid click_id or customer_key." },
  },
  {
    route: "POST /api/v1/track/click",
    attack: "B's program key",
    call: () =>
      postJson(
        "/api/v1/track/click",
        {
          affiliate_url: `https://shop.example/?aff=${b.program.links[0]}`,
          additional_data: { test_mode: true, program_id: a.program.programId },
        },
        bearer(b.program.apiKey),
      ),
    status: 403,
    error: { message: "program_id does not match the API key" },
  },
  {
    route: "POST /api/v1/track/click",
    attack: "B's program key",
    // A's link named under B's program.
    call: () =>
      postJson("/api/v1/track/click", {
        affiliate_url: `https://shop.example/?aff=${a.program.links[0]}`,
        program_id: b.program.programId,
      }),
    status: 400,
    error: { message: "Referral link not found" },
  },
  {
    route: "POST /api/v1/track/visit",
    attack: "B's program key",
    call: () =>
      postJson("/api/v1/track/visit", {
        click_id: a.clickId,
        url: "https://shop.example/pricing",
        program_id: b.program.programId,
      }),
    status: 400,
    error: { message: "Unknown click_id" },
  },
  {
    route: "GET /api/v1/programs/me/readiness",
    attack: "B's program key",
    call: () => call("GET", "/api/v1/programs/me/readiness", { token: b.program.apiKey }),
    status: 200,
  },
  {
    route: "GET /api/v1/programs/me/analytics/sources",
    attack: "B's program key",
    call: () => call("GET", "/api/v1/programs/me/analytics/sources", { token: b.program.apiKey }),
    status: 200,
  },
  {
    route: "GET /api/v1/track/config",
    attack: "B's program key",
    // Public by design (the browser tracker reads it); must hold nothing secret of A.
    call: () => call("GET", `/api/v1/track/config?program_id=${a.program.programId}`),
    status: 200,
    echoes: () => [String(a.program.programId)],
  },
  {
    route: "GET /api/v1/cli/status",
    attack: "B's program key",
    call: () =>
      cli("GET", `/api/v1/cli/status?program_id=${a.program.programId}`, { token: b.program.apiKey }),
    status: 200,
  },
  {
    route: "POST /api/v1/cli/test-event",
    attack: "B's program key",
    call: () =>
      cli("POST", "/api/v1/cli/test-event", {
        token: b.program.apiKey,
        body: { event_type: "click", program_id: a.program.programId },
      }),
    status: 200,
  },
  // ---- B's sign-in session: A's program by id, and A's link id under B's own program ----
  ...programRoutes("B's sign-in session", () => b.person),
  {
    route: "PATCH /api/v1/programs/:id/links/:linkId",
    attack: "B's sign-in session",
    call: async () =>
      dashboard("PATCH", `/api/v1/programs/${b.program.programId}/links/${a.linkId}`, () => b.person, {
        active: false,
      })(),
    status: 404,
    error: { message: "Referral link not found" },
  },
  {
    route: "POST /api/v1/programs/:id/links",
    attack: "B's sign-in session",
    call: async () =>
      dashboard("POST", `/api/v1/programs/${b.program.programId}/links`, () => b.person, {
        partner_id: a.program.partnerIds[0],
        short_link: "mallory-borrowed-partner",
      })(),
    status: 400,
    error: { message: "partner_id must be an active partner of this program" },
  },
  {
    route: "POST /api/tracking/check-test-events",
    attack: "B's sign-in session",
    // B's own program, asking after A's click id.
    call: async () =>
      dashboard("POST", "/api/tracking/check-test-events", () => b.person, {
        program_id: b.program.programId,
        events: [{ kind: "click", id: a.clickId }],
      })(),
    status: 200,
    // The id the caller sent comes back, reported as not found in the caller's program.
    echoes: () => [a.clickId],
    own: (body) =>
      expect(body.data).toEqual({
        program_id: b.program.programId,
        events: [{ kind: "click", id: a.clickId, landed: false, recorded_at: null }],
        all_landed: false,
      }),
  },
  {
    route: "GET /api/v1/programs",
    attack: "B's sign-in session",
    call: async () => call("GET", "/api/v1/programs", { token: await session(b.person) }),
    status: 200,
    own: (body) => expect(body.data.programs.map((p: { id: number }) => p.id)).toEqual([b.program.programId]),
  },
  {
    route: "POST /api/v1/programs",
    attack: "B's sign-in session",
    call: async () =>
      dashboard("POST", "/api/v1/programs", () => b.person, {
        advertiser_id: a.person.advertiserId,
        name: "squatter",
        domain: "squat.example",
        commission_type: "percent",
        commission_rate: 10,
      })(),
    // A workspace B does not own or administer is refused, as the command line's init refuses it.
    status: 403,
    error: { message: "advertiser_id does not match the authenticated account" },
  },
  {
    route: "GET /api/v1/auth/session",
    attack: "B's sign-in session",
    call: async () => call("GET", "/api/v1/auth/session", { token: await session(b.person) }),
    status: 200,
  },
  // ---- A removed member of A's workspace ----
  ...programRoutes("removed member's session", () => removed),
  {
    route: "GET /api/v1/programs",
    attack: "removed member's session",
    call: async () => call("GET", "/api/v1/programs", { token: await session(removed) }),
    status: 200,
    own: (body) => expect(body.data.programs).toEqual([]),
  },
  // ---- B's command-line login token ----
  {
    route: "GET /api/v1/cli/programs",
    attack: "B's login token",
    call: () => cli("GET", "/api/v1/cli/programs", { token: b.loginToken }),
    status: 200,
    own: (body) => expect(JSON.stringify(body)).toContain(`"id":${b.program.programId}`),
  },
  {
    route: "POST /api/v1/cli/init",
    attack: "B's login token",
    call: () =>
      cli("POST", "/api/v1/cli/init", {
        token: b.loginToken,
        body: {
          advertiser_id: a.person.advertiserId,
          name: "squatter",
          domain: "squat.example",
          commission_type: "percent",
          commission_rate: 10,
        },
      }),
    status: 403,
    error: { message: "advertiser_id does not match the authenticated account" },
  },
  {
    route: "POST /api/v1/cli/stripe-connect",
    attack: "B's login token",
    call: () => cli("POST", "/api/v1/cli/stripe-connect", { token: b.loginToken, body: {} }),
    status: 410,
    error: {
      message:
        "This endpoint is retired. Connect your payments provider account from the dashboard: program settings, Payments.",
    },
  },
];

/** Routes that hold no tenant's data or act before any tenant is known (sign-in, docs, scripts). */
const TENANTLESS = [
  "GET /healthz",
  "GET /tracker.js",
  "GET /tracker/:file",
  "GET /api/v1/auth/sign-in",
  "GET /api/v1/auth/callback",
  "POST /api/v1/auth/tokens",
  "POST /api/v1/auth/sign-out",
  "POST /api/v1/cli/auth/start",
  "POST /api/v1/cli/auth/callback",
  "GET /api/v1/cli/auth/poll",
  "POST /api/v1/cli/auth/logout",
  "GET /cli/login",
  "POST /cli/login/approve",
  "GET /api/v1/programs/stripe-connect/callback",
  "GET /openapi.json",
  "GET /docs",
  "GET /dashboard/signed-out",
  "GET /dashboard/assets/:file",
];

/** The strings of A that no answer to anybody else may hold. */
function secretsOfA(): string[] {
  return [
    a.program.apiKey,
    a.program.testApiKey,
    a.program.apiKey.slice(0, 16),
    a.clickId,
    a.customerKey,
    a.transactionId,
    ...a.program.links,
    a.person.email,
    a.person.token,
  ];
}

/** A's numeric ids by kind, looked for under the keys of that kind (`sale_id`, `program.id`, ...). */
function idsOfA(): Array<[RegExp, number[]]> {
  return [
    [/program/i, [a.program.programId]],
    [/sale/i, [a.saleId]],
    [/commission/i, [a.commissionId]],
    [/partner/i, [...a.program.partnerIds]],
    [/link/i, [a.linkId]],
    [/advertiser|workspace/i, [a.person.advertiserId]],
  ];
}

/** Every `[path, value]` whose key names an id, the path naming its parents (`data.program.id`). */
function idFieldsOf(value: unknown, path = ""): Array<[string, unknown]> {
  if (Array.isArray(value)) return value.flatMap((item) => idFieldsOf(item, path));
  if (typeof value !== "object" || value === null) return [];
  return Object.entries(value).flatMap(([key, inner]) => {
    const here = path ? `${path}.${key}` : key;
    const own: Array<[string, unknown]> = /(^id$|_id$|Id$)/.test(key) ? [[here, inner]] : [];
    return [...own, ...idFieldsOf(inner, here)];
  });
}

function expectNothingOfA(body: LooseJson, echoes: string[]): void {
  const text = JSON.stringify(body);
  for (const secret of secretsOfA()) {
    if (!echoes.includes(secret)) expect(text, `answer holds ${secret}`).not.toContain(secret);
  }
  for (const [field, value] of idFieldsOf(body)) {
    // The last segment that names a kind decides (`data.programs.id` is a program id).
    const kind = idsOfA().find(([pattern]) => pattern.test(field.split(".").slice(-2).join(".")));
    if (kind && !echoes.includes(String(value))) {
      expect(kind[1], `answer holds A's ${field}`).not.toContain(Number(value));
    }
  }
}

/** Every row A owns, as text: compared before and after the matrix. */
async function snapshotOfA(): Promise<string> {
  const programId = a.program.programId;
  const tables = [
    "programs where id = $1",
    "program_api_keys where program_id = $1",
    "program_partners where program_id = $1",
    "referral_links where program_id = $1",
    "affiliate_click_events where program_id = $1",
    "customers where program_id = $1",
    "affiliate_lead_events where program_id = $1",
    "affiliate_sale_events where program_id = $1",
    "commissions where program_id = $1",
    "balance_ledger where program_id = $1",
    "partner_balances where program_id = $1",
    "commission_rules where program_id = $1",
    "affiliate_visit_events where program_id = $1",
    "webhook_endpoints where program_id = $1",
  ];
  const parts: string[] = [];
  for (const from of tables) {
    const [table, where] = from.split(" where ") as [string, string];
    const result = await db.execute(
      sql.raw(
        `select coalesce(json_agg(t order by t::text), '[]'::json)::text as rows from ${table} t where ${where.replace("$1", String(programId))}`,
      ),
    );
    parts.push(`${table}: ${(result.rows[0] as { rows: string }).rows}`);
  }
  return parts.join("\n");
}

let before: string;

/** A's own webhook endpoint, created by A's owner session: the target of the endpoint routes' rows. */
async function webhookEndpointOf(person: Person, program: ProgramFixture): Promise<number> {
  const created = await call("POST", `/api/v1/programs/${program.programId}/webhooks`, {
    token: await session(person),
    origin: SAME_ORIGIN,
    body: { url: "https://hooks.brand-a.example/affiliate", events: ["sale.created"] },
  });
  expect(created.status).toBe(201);
  return Number((created.body.data as { endpoint: { id: number } }).endpoint.id);
}

beforeAll(async () => {
  const personA = await signInPerson();
  const programA = await programOf(personA);
  const clickId = await click(programA);
  const customerKey = `victim-${crypto.randomUUID()}`;
  const lead = await postJson(
    "/api/v1/track/lead",
    { click_id: clickId, customer_key: customerKey },
    bearer(programA.apiKey),
  );
  expect(lead.status).toBe(200);
  const transactionId = txn();
  const recorded = await sale(programA, {
    transaction_id: transactionId,
    amount_cents: 10_000,
    customer_key: customerKey,
  });
  expect(recorded.status).toBe(200);
  const link = await db.execute<{ id: number }>(
    sql`select id from referral_links where short_link = ${programA.links[0]}`,
  );
  a = {
    person: personA,
    program: programA,
    clickId,
    customerKey,
    transactionId,
    saleId: Number(recorded.body.sale_id),
    commissionId: Number(recorded.body.commission_id),
    linkId: Number(link.rows[0]?.id),
    webhookEndpointId: await webhookEndpointOf(personA, programA),
  };
  const personB = await signInPerson();
  b = { person: personB, program: await programOf(personB), loginToken: await loginTokenFor(personB.userId) };
  removed = await signInPerson();
  await addMember(personA.advertiserId, removed.userId, "admin", "removed");
  before = await snapshotOfA();
});

describe("tenant isolation: every route against another tenant's ids", () => {
  it("covers every route the app serves (a new route must join the matrix or the tenantless list)", () => {
    const served = new Set(
      createApp()
        .routes.filter((route) => route.method !== "ALL")
        .map((route) => `${route.method} ${route.path}`),
    );
    const covered = new Set([...rows.map((row) => row.route), ...TENANTLESS]);
    expect([...served].filter((route) => !covered.has(route))).toEqual([]);
    expect([...covered].filter((route) => !served.has(route))).toEqual([]);
  });

  it.each(rows.map((row, i) => [`${row.route} with ${row.attack} (#${i + 1})`, row] as const))(
    "%s",
    async (_name, row) => {
      const answer = await row.call();
      expect(answer.status, JSON.stringify(answer.body)).toBe(row.status);
      if (row.error) {
        expect(answer.body).toEqual({
          data: null,
          error: {
            status: row.status,
            name: expect.any(String),
            message: row.error.message,
            details: row.error.details?.() ?? {},
            ...(row.error.code ? { code: row.error.code } : {}),
          },
        });
      } else if (!row.route.startsWith("GET /dashboard")) {
        expect(answer.status).toBeLessThan(300);
      }
      expectNothingOfA(answer.body, row.echoes?.() ?? []);
      row.own?.(answer.body);
    },
  );

  it("left every row of A as it was", async () => {
    expect(await snapshotOfA()).toBe(before);
  });
});
