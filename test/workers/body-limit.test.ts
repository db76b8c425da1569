import { SELF } from "cloudflare:test";
import { sql } from "drizzle-orm";
import { beforeAll, describe, expect, it } from "vitest";
import { createProgram, db, freshIp, type ProgramFixture } from "./harness.ts";
import { type OwnedProgram, ownerWithProgram } from "./program-admin-harness.ts";
import { txn } from "./sale-harness.ts";

const limit = 65_536;

async function rowsOf(programId: number): Promise<number> {
  const result = await db.execute<{ total: string }>(sql`
    select
      (select count(*) from affiliate_click_events where program_id = ${programId})
      + (select count(*) from affiliate_lead_events where program_id = ${programId})
      + (select count(*) from affiliate_sale_events where program_id = ${programId})
      + (select count(*) from affiliate_visit_events where program_id = ${programId}) as total`);
  return Number(result.rows[0]!.total);
}

/** A JSON body of exactly `bytes` bytes: the fields, then an ignored padding field. */
function bodyOf(fields: Record<string, unknown>, bytes: number): string {
  const empty = JSON.stringify({ ...fields, padding: "" });
  return JSON.stringify({ ...fields, padding: "x".repeat(bytes - empty.length) });
}

function chunked(text: string): ReadableStream<Uint8Array> {
  const bytes = new TextEncoder().encode(text);
  return new ReadableStream({
    start(controller) {
      for (let at = 0; at < bytes.length; at += 8192) controller.enqueue(bytes.slice(at, at + 8192));
      controller.close();
    },
  });
}

/** The limiter runs before the body limit, so a 413 carries the bucket's headers like every answer. */
function expectRateLimitHeaders(response: Response): void {
  expect(response.headers.get("X-RateLimit-Limit")).toMatch(/^\d+$/);
  expect(response.headers.get("X-RateLimit-Remaining")).toMatch(/^\d+$/);
  expect(response.headers.get("X-RateLimit-Reset")).toMatch(/^\d+$/);
}

const routes: Array<{
  name: string;
  path: string;
  keyed: boolean;
  code?: string;
  fields: (p: ProgramFixture) => Record<string, unknown>;
}> = [
  {
    name: "click",
    path: "/api/v1/track/click",
    keyed: false,
    fields: (p) => ({ affiliate_url: `https://shop.example/?aff=${p.links[0]}` }),
  },
  { name: "lead", path: "/api/v1/track/lead", keyed: true, fields: () => ({ customer_key: "u1" }) },
  {
    name: "sale",
    path: "/api/v1/track/sale",
    keyed: true,
    code: "payload_too_large",
    fields: () => ({ transaction_id: txn(), amount_cents: 100, line_items: { note: "big" } }),
  },
  {
    name: "refund",
    path: "/api/v1/track/refund",
    keyed: true,
    code: "payload_too_large",
    fields: () => ({ transaction_id: txn() }),
  },
  {
    name: "visit",
    path: "/api/v1/track/visit",
    keyed: false,
    fields: () => ({ click_id: "clk_unknown", url: "https://shop.example/" }),
  },
  // The command-line routes with a body: spec section 8 limits /api/v1/cli/* too, so the 413 carries the
  // X-RateLimit-* headers there as well (the body is refused before the credential is read).
  {
    name: "cli init",
    path: "/api/v1/cli/init",
    keyed: true,
    fields: () => ({ name: "Big", domain: "big.example", commission_type: "percent", commission_rate: 10 }),
  },
  {
    name: "cli test-event",
    path: "/api/v1/cli/test-event",
    keyed: true,
    fields: () => ({ event_type: "click" }),
  },
  {
    name: "cli auth/callback",
    path: "/api/v1/cli/auth/callback",
    keyed: false,
    fields: () => ({ state: "some-state", id_token: "some.id.token" }),
  },
];

const cases = routes.flatMap((route) =>
  (["Content-Length", "chunked"] as const).map((framing) => ({ ...route, framing })),
);

describe("request body limit (64 KB)", () => {
  let p: ProgramFixture;
  beforeAll(async () => {
    p = await createProgram();
  });

  it.each(cases)("$name, $framing: one byte over is a 413, nothing written", async (c) => {
    const before = await rowsOf(p.programId);
    const text = bodyOf(c.fields(p), limit + 1);
    const response = await SELF.fetch(`https://api.test${c.path}`, {
      method: "POST",
      headers: {
        "Content-Type": "application/json",
        "CF-Connecting-IP": freshIp(),
        ...(c.keyed ? { Authorization: `Bearer ${p.apiKey}` } : {}),
      },
      body: c.framing === "chunked" ? chunked(text) : text,
    });
    expect(response.status).toBe(413);
    expect(await response.json()).toEqual({
      data: null,
      error: {
        status: 413,
        name: "PayloadTooLargeError",
        message: "Request body too large (limit 65536 bytes)",
        details: {},
        ...(c.code ? { code: c.code } : {}),
      },
    });
    expect(response.headers.get("X-Request-ID")).toMatch(/^req_/);
    // Found by the fuzzer: the 413 came before the limiter and carried no X-RateLimit-* headers.
    expectRateLimitHeaders(response);
    expect(await rowsOf(p.programId)).toBe(before);
  });

  it.each(["Content-Length", "chunked"] as const)(
    "%s: a body of exactly the limit is read",
    async (framing) => {
      const text = bodyOf({ affiliate_url: `https://shop.example/?aff=${p.links[0]}` }, limit);
      expect(new TextEncoder().encode(text).length).toBe(limit);
      const response = await SELF.fetch("https://api.test/api/v1/track/click", {
        method: "POST",
        headers: { "Content-Type": "application/json", "CF-Connecting-IP": freshIp() },
        body: framing === "chunked" ? chunked(text) : text,
      });
      expect(response.status).toBe(200);
    },
  );

  it("a chunked refund body under the limit still reaches the handler (404 for an unknown sale)", async () => {
    const response = await SELF.fetch("https://api.test/api/v1/track/refund", {
      method: "POST",
      headers: {
        "Content-Type": "application/json",
        "CF-Connecting-IP": freshIp(),
        Authorization: `Bearer ${p.apiKey}`,
      },
      body: chunked(JSON.stringify({ transaction_id: txn() })),
    });
    expect(response.status).toBe(404);
    expect(((await response.json()) as { error: { message: string } }).error.message).toBe(
      "Sale not found for transaction_id",
    );
  });

  it("an 8 MB click body is refused", async () => {
    const response = await SELF.fetch("https://api.test/api/v1/track/click", {
      method: "POST",
      headers: { "Content-Type": "application/json", "CF-Connecting-IP": freshIp() },
      body: bodyOf({ affiliate_url: `https://shop.example/?aff=${p.links[0]}` }, 8 * 1024 * 1024),
    });
    expect(response.status).toBe(413);
  });

  it("the 413 is in the OpenAPI document of every route with a body", async () => {
    const document = (await (await SELF.fetch("https://api.test/openapi.json")).json()) as {
      paths: Record<string, { post?: { responses: Record<string, unknown> } }>;
    };
    for (const route of routes) {
      expect(Object.keys(document.paths[route.path]?.post?.responses ?? {})).toContain("413");
    }
  });
});

// The management routes count per sign-in token (README "Program settings": every response carries the
// X-RateLimit-* headers). The settings route already refused a big body after its limiter; the others
// refused it before, so their 413 had no X-RateLimit-* headers.
describe("request body limit on the signed-in management routes", () => {
  let owner: OwnedProgram;
  beforeAll(async () => {
    owner = await ownerWithProgram();
  });

  const managementRoutes: Array<{ method: string; name: string; path: (programId: number) => string }> = [
    {
      method: "PATCH",
      name: "/api/v1/programs/:id/settings",
      path: (id) => `/api/v1/programs/${id}/settings`,
    },
    { method: "POST", name: "/api/v1/programs", path: () => "/api/v1/programs" },
    {
      method: "POST",
      name: "/api/v1/programs/:id/api-keys/regenerate",
      path: (id) => `/api/v1/programs/${id}/api-keys/regenerate`,
    },
    {
      method: "POST",
      name: "/api/v1/programs/:id/partners",
      path: (id) => `/api/v1/programs/${id}/partners`,
    },
    { method: "POST", name: "/api/v1/programs/:id/links", path: (id) => `/api/v1/programs/${id}/links` },
    { method: "PATCH", name: "/api/v1/programs/:id/links/1", path: (id) => `/api/v1/programs/${id}/links/1` },
    {
      method: "POST",
      name: "/api/v1/programs/:id/webhooks",
      path: (id) => `/api/v1/programs/${id}/webhooks`,
    },
    {
      method: "PATCH",
      name: "/api/v1/programs/:id/webhooks/1",
      path: (id) => `/api/v1/programs/${id}/webhooks/1`,
    },
    {
      method: "POST",
      name: "/api/v1/programs/:id/webhooks/1/rotate-secret",
      path: (id) => `/api/v1/programs/${id}/webhooks/1/rotate-secret`,
    },
    {
      method: "POST",
      name: "/api/v1/programs/:id/commissions/1/review",
      path: (id) => `/api/v1/programs/${id}/commissions/1/review`,
    },
  ];

  it.each(managementRoutes)("$method $name: the 413 carries the X-RateLimit-* headers", async (route) => {
    const response = await SELF.fetch(`https://api.test${route.path(owner.programId)}`, {
      method: route.method,
      headers: {
        "Content-Type": "application/json",
        "CF-Connecting-IP": freshIp(),
        Authorization: `Bearer ${owner.token}`,
      },
      body: bodyOf({ name: "Big" }, limit + 1),
    });
    expect(response.status).toBe(413);
    expect(await response.json()).toEqual({
      data: null,
      error: {
        status: 413,
        name: "PayloadTooLargeError",
        message: "Request body too large (limit 65536 bytes)",
        details: {},
      },
    });
    expectRateLimitHeaders(response);
  });
});
