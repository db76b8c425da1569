import { and, desc, eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { PROGRAM_ACCESS_REFUSED } from "../../lib/auth/require-program-membership.ts";
import {
  INVALID_SIGN_IN_TOKEN,
  PROGRAM_KEY_REFUSED,
  SIGN_IN_REQUIRED,
} from "../../lib/http/require-session.ts";
import { auditLog, commissionRules, programs } from "../../schema/index.ts";
import { BASE, call } from "./dashboard-sign-in.ts";
import { db } from "./harness.ts";
import {
  addMember,
  expireToken,
  type OwnedProgram,
  ownerWithProgram,
  platform,
  signedInPerson,
} from "./program-admin-harness.ts";
import { inOneWindow } from "./rate-limit-helpers.ts";

const settingsPath = (id: number | string) => `/api/v1/programs/${id}/settings`;

async function auditOf(programId: number) {
  return db
    .select()
    .from(auditLog)
    .where(and(eq(auditLog.programId, programId), eq(auditLog.action, "program.settings_changed")))
    .orderBy(desc(auditLog.id));
}

describe("GET /api/v1/programs/:id/settings", () => {
  it("shows every setting, the keys only masked, and a Lead capture mode line", async () => {
    const owner = await ownerWithProgram();
    const response = await call("GET", settingsPath(owner.programId), { token: owner.token });
    expect(response.status).toBe(200);
    expect(response.headers.get("X-RateLimit-Limit")).toBe("30");
    expect(Number(response.headers.get("X-RateLimit-Remaining"))).toBe(29);
    expect(Number(response.headers.get("X-RateLimit-Reset"))).toBeGreaterThan(0);
    const data = response.body.data;
    expect(data.program_id).toBe(owner.programId);
    expect(data.workspace_id).toBe(owner.advertiserId);
    expect(data.settings).toEqual({
      name: expect.any(String),
      domain: "shop.example.com",
      attribution_window_days: 60,
      lead_auth_policy: "server_required",
      allowed_origins: [],
      commission_type: "percent",
      commission_rate: 20,
      duration_months: 0,
      hold_days: 0,
      commission_rules: [],
      stripe_account_id: null,
      hold_flagged_commissions: false,
      email_attribution_settled_leads_only: false,
    });
    expect(data.api_key).toBe(`${owner.apiKey.slice(0, 12)}...${owner.apiKey.slice(-4)}`);
    expect(data.test_api_key).toBe(`${owner.testApiKey.slice(0, 12)}...${owner.testApiKey.slice(-4)}`);
    const text = JSON.stringify(response.body);
    expect(text).not.toContain(owner.apiKey);
    expect(text).not.toContain(owner.testApiKey);
    expect(data.summary).toContain(
      "Lead capture mode: Server required (browser leads are provisional until your server confirms them)",
    );
    expect(data.summary).toContain("Payments: not connected");
  });

  it("answers the page's cookie too (reads need no Origin)", async () => {
    const owner = await ownerWithProgram();
    const response = await call("GET", settingsPath(owner.programId), { cookie: owner.token });
    expect(response.status).toBe(200);
  });
});

describe("PATCH /api/v1/programs/:id/settings", () => {
  it("applies every setting at once and records who changed what from what to what", async () => {
    const owner = await ownerWithProgram();
    const body = {
      name: "Renamed program",
      domain: "https://Brand.Example.org/path",
      attribution_window_days: 30,
      lead_auth_policy: "browser_allowed",
      allowed_origins: ["https://brand.example.org", "http://localhost:3000", "http://127.0.0.1:3000"],
      commission_type: "recurring_percent",
      commission_rate: 12.5,
      duration_months: 12,
      hold_days: 30,
      commission_rules: [{ product_id: "pro_plan", commission_type: "fixed", commission_rate: 25 }],
      stripe_account_id: "acct_Settings1",
    };
    const patched = await call("PATCH", settingsPath(owner.programId), { token: owner.token, body });
    expect(patched.status).toBe(200);
    expect(patched.body.data.settings).toEqual({
      name: "Renamed program",
      domain: "brand.example.org",
      attribution_window_days: 30,
      lead_auth_policy: "browser_allowed",
      allowed_origins: ["https://brand.example.org", "http://localhost:3000", "http://127.0.0.1:3000"],
      commission_type: "recurring_percent",
      commission_rate: 12.5,
      duration_months: 12,
      hold_days: 30,
      commission_rules: [
        { product_id: "pro_plan", commission_type: "fixed", commission_rate: 25, duration_months: null },
      ],
      stripe_account_id: "acct_Settings1",
      hold_flagged_commissions: false,
      email_attribution_settled_leads_only: false,
    });
    expect(patched.body.data.changed).toHaveLength(11);
    expect(patched.body.data.summary).toContain(
      "Lead capture mode: Browser allowed (browser leads settle directly)",
    );
    expect(patched.body.data.summary).toContain("Commission: 12.5% of each payment, for 12 months");

    const read = await call("GET", settingsPath(owner.programId), { token: owner.token });
    expect(read.body.data.settings).toEqual(patched.body.data.settings);
    const [entry] = await auditOf(owner.programId);
    expect(entry?.actorUserId).toBe(owner.userId);
    expect(entry?.advertiserId).toBe(owner.advertiserId);
    expect(entry?.createdAt).toBeInstanceOf(Date);
    expect(entry?.changes).toMatchObject({
      lead_auth_policy: { from: "server_required", to: "browser_allowed" },
      attribution_window_days: { from: 60, to: 30 },
      commission_rate: { from: 20, to: 12.5 },
      stripe_account_id: { from: null, to: "acct_Settings1" },
      allowed_origins: { from: [], to: body.allowed_origins },
    });

    // Disconnecting the payments account, and replacing the rules with none.
    const cleared = await call("PATCH", settingsPath(owner.programId), {
      token: owner.token,
      body: { stripe_account_id: null, commission_rules: [] },
    });
    expect(cleared.status).toBe(200);
    expect(cleared.body.data.settings.stripe_account_id).toBeNull();
    expect(cleared.body.data.summary).toContain("Payments: not connected");
    expect(
      await db.select().from(commissionRules).where(eq(commissionRules.programId, owner.programId)),
    ).toEqual([]);
    const [latest] = await auditOf(owner.programId);
    expect(latest?.changes).toEqual({
      stripe_account_id: { from: "acct_Settings1", to: null },
      commission_rules: {
        from: [
          { product_id: "pro_plan", commission_type: "fixed", commission_rate: 25, duration_months: null },
        ],
        to: [],
      },
    });
  });

  it("a body that changes nothing writes no audit entry", async () => {
    const owner = await ownerWithProgram();
    const response = await call("PATCH", settingsPath(owner.programId), {
      token: owner.token,
      body: { attribution_window_days: 60 },
    });
    expect(response.status).toBe(200);
    expect(response.body.data.changed).toEqual([]);
    expect(await auditOf(owner.programId)).toEqual([]);
  });

  it("is all or nothing: one invalid field and nothing is changed or audited", async () => {
    const owner = await ownerWithProgram();
    const response = await call("PATCH", settingsPath(owner.programId), {
      token: owner.token,
      body: { name: "Should not stick", hold_days: -1 },
    });
    expect(response.status).toBe(400);
    const [row] = await db.select().from(programs).where(eq(programs.id, owner.programId));
    expect(row?.name).not.toBe("Should not stick");
    expect(await auditOf(owner.programId)).toEqual([]);
  });

  it("two concurrent changes both land, each audited against the state it changed", async () => {
    const owner = await ownerWithProgram();
    const [a, b] = await Promise.all([
      call("PATCH", settingsPath(owner.programId), { token: owner.token, body: { hold_days: 7 } }),
      call("PATCH", settingsPath(owner.programId), {
        token: owner.token,
        body: { attribution_window_days: 9 },
      }),
    ]);
    expect([a.status, b.status]).toEqual([200, 200]);
    const [row] = await db.select().from(programs).where(eq(programs.id, owner.programId));
    expect([row?.holdDays, row?.attributionWindowDays]).toEqual([7, 9]);
    expect(await auditOf(owner.programId)).toHaveLength(2);
  });

  it("a payments account connected to another program answers 409", async () => {
    const first = await ownerWithProgram();
    const second = await ownerWithProgram();
    const account = `acct_${crypto.randomUUID().replace(/-/g, "").slice(0, 16)}`;
    expect(
      (
        await call("PATCH", settingsPath(first.programId), {
          token: first.token,
          body: { stripe_account_id: account },
        })
      ).status,
    ).toBe(200);
    const taken = await call("PATCH", settingsPath(second.programId), {
      token: second.token,
      body: { stripe_account_id: account },
    });
    expect(taken.status).toBe(409);
    expect(taken.body).toEqual(platform(409, "stripe_account_id is already connected to another program"));
  });

  const invalid: [string, unknown, string][] = [
    ["empty body", {}, "No settings to change: send at least one setting"],
    ["a list for a body", [], "Request body must be a JSON object"],
    ["a number for a body", 42, "Request body must be a JSON object"],
    [
      "unknown field",
      { api_token: "x" },
      "Unknown setting: api_token. Valid: name, domain, attribution_window_days, lead_auth_policy, allowed_origins, commission_type, commission_rate, duration_months, hold_days, commission_rules, stripe_account_id, hold_flagged_commissions, email_attribution_settled_leads_only",
    ],
    ["name empty", { name: " " }, "name must be a non-empty string of at most 200 characters"],
    ["domain", { domain: "not a domain" }, "domain must be a host name such as shop.example.com"],
    [
      "window 0",
      { attribution_window_days: 0 },
      "attribution_window_days must be a whole number of days from 1 to 365",
    ],
    [
      "window 366",
      { attribution_window_days: 366 },
      "attribution_window_days must be a whole number of days from 1 to 365",
    ],
    [
      "window 1.5",
      { attribution_window_days: 1.5 },
      "attribution_window_days must be a whole number of days from 1 to 365",
    ],
    [
      "lead policy",
      { lead_auth_policy: "anything" },
      "lead_auth_policy must be one of: server_required, browser_allowed",
    ],
    [
      "origins not a list",
      { allowed_origins: "https://a.example" },
      "allowed_origins must be a list of at most 50 origins",
    ],
    [
      "origin with a path",
      { allowed_origins: ["https://a.example", "https://b.example/"] },
      "allowed_origins[1] must be an origin scheme://host[:port] with http or https and nothing after the host or port",
    ],
    [
      "origin without scheme",
      { allowed_origins: ["shop.example.com"] },
      "allowed_origins[0] must be an origin scheme://host[:port] with http or https and nothing after the host or port",
    ],
    [
      "origin with another scheme",
      { allowed_origins: ["ftp://shop.example.com"] },
      "allowed_origins[0] must be an origin scheme://host[:port] with http or https and nothing after the host or port",
    ],
    [
      "commission type",
      { commission_type: "bounty" },
      "Invalid commission_type: bounty. Valid: percent, fixed, recurring_percent, recurring_fixed",
    ],
    ["rate zero", { commission_rate: 0 }, "commission_rate must be a positive number"],
    ["rate as string", { commission_rate: "10" }, "commission_rate must be a positive number"],
    [
      "rate over 100 percent",
      { commission_rate: 101 },
      "commission_rate is a percentage for this type and cannot exceed 100",
    ],
    ["duration", { duration_months: -1 }, "duration_months must be a whole number of months (0 = lifetime)"],
    [
      "duration over a hundred years",
      { duration_months: 1201 },
      "duration_months must be at most 1200 (0 = lifetime)",
    ],
    [
      "rate below four decimal places",
      { commission_rate: 0.00001 },
      "commission_rate must be at least 0.0001 (rates keep 4 decimal places)",
    ],
    [
      "fixed rate the column cannot hold",
      { commission_type: "fixed", commission_rate: 2e10 },
      "commission_rate must be less than 10000000000",
    ],
    ["hold days", { hold_days: 366 }, "hold_days must be a whole number of days from 0 to 365"],
    ["rules not a list", { commission_rules: {} }, "commission_rules must be a list of at most 100 rules"],
    [
      "rule without product",
      { commission_rules: [{ commission_type: "fixed", commission_rate: 5 }] },
      "commission_rules[0].product_id must be a string of 1 to 255 visible characters",
    ],
    [
      "rule repeated",
      {
        commission_rules: [
          { product_id: "p", commission_type: "fixed", commission_rate: 5 },
          { product_id: "p", commission_type: "fixed", commission_rate: 6 },
        ],
      },
      "commission_rules[1].product_id repeats an earlier rule",
    ],
    [
      "rule rate",
      { commission_rules: [{ product_id: "p", commission_type: "percent", commission_rate: 150 }] },
      "commission_rules[0].commission_rate is a percentage for this type and cannot exceed 100",
    ],
    [
      "rule extra field",
      { commission_rules: [{ product_id: "p", commission_type: "fixed", commission_rate: 5, partner: 1 }] },
      "commission_rules[0].partner is not a rule field",
    ],
    [
      "payments account",
      { stripe_account_id: "sk_live_x" },
      "stripe_account_id must be a connected account id such as acct_1A2b3C, or null to disconnect",
    ],
  ];
  it.each(invalid)("400 naming the field: %s", async (_, body, message) => {
    const owner = await ownerWithProgram();
    const response = await call("PATCH", settingsPath(owner.programId), { token: owner.token, body });
    expect(response.status).toBe(400);
    expect(response.body).toEqual(platform(400, message));
    expect(await auditOf(owner.programId)).toEqual([]);
  });

  it("turning a fixed 500 into a percent type without a new rate is refused on commission_rate", async () => {
    const owner = await ownerWithProgram();
    const fixed = await call("PATCH", settingsPath(owner.programId), {
      token: owner.token,
      body: { commission_type: "fixed", commission_rate: 500 },
    });
    expect(fixed.status).toBe(200);
    const response = await call("PATCH", settingsPath(owner.programId), {
      token: owner.token,
      body: { commission_type: "percent" },
    });
    expect(response.body).toEqual(
      platform(400, "commission_rate is a percentage for this type and cannot exceed 100"),
    );
  });

  it("a cookie-authenticated change from another site is refused", async () => {
    const owner = await ownerWithProgram();
    const response = await call("PATCH", settingsPath(owner.programId), {
      cookie: owner.token,
      origin: "https://evil.example",
      body: { name: "x" },
    });
    expect(response.status).toBe(403);
    const same = await call("PATCH", settingsPath(owner.programId), {
      cookie: owner.token,
      origin: BASE,
      body: { name: "From the page" },
    });
    expect(same.status).toBe(200);
  });
});

describe("settings refusals", () => {
  type Case = [string, (owner: OwnedProgram) => Promise<{ token?: string; path?: string }>, number, string];
  const cases: Case[] = [
    ["no token", async () => ({}), 401, SIGN_IN_REQUIRED],
    [
      "an unknown token",
      async () => ({ token: "dst_made_up_token_made_up_token_made_up_tok" }),
      401,
      INVALID_SIGN_IN_TOKEN,
    ],
    [
      "an expired token",
      async (owner) => {
        await expireToken(owner.token);
        return { token: owner.token };
      },
      401,
      INVALID_SIGN_IN_TOKEN,
    ],
    [
      "a revoked token",
      async (owner) => {
        await call("POST", "/api/v1/auth/sign-out", { token: owner.token });
        return { token: owner.token };
      },
      401,
      INVALID_SIGN_IN_TOKEN,
    ],
    ["the program's API key", async (owner) => ({ token: owner.apiKey }), 401, PROGRAM_KEY_REFUSED],
    ["the program's test key", async (owner) => ({ token: owner.testApiKey }), 401, PROGRAM_KEY_REFUSED],
    [
      "another workspace's person",
      async () => ({ token: (await signedInPerson()).token }),
      403,
      PROGRAM_ACCESS_REFUSED,
    ],
    [
      "a program that does not exist",
      async (owner) => ({ token: owner.token, path: settingsPath(2147483000) }),
      403,
      PROGRAM_ACCESS_REFUSED,
    ],
    [
      "a program id that is not a number",
      async (owner) => ({ token: owner.token, path: settingsPath("abc") }),
      403,
      PROGRAM_ACCESS_REFUSED,
    ],
    [
      "a removed membership",
      async (owner) => {
        const person = await signedInPerson();
        await addMember(owner.advertiserId, person.userId, "admin", "removed");
        return { token: person.token };
      },
      403,
      PROGRAM_ACCESS_REFUSED,
    ],
    [
      "an invitation not yet accepted",
      async (owner) => {
        const person = await signedInPerson();
        await addMember(owner.advertiserId, person.userId, "member", "invited");
        return { token: person.token };
      },
      403,
      PROGRAM_ACCESS_REFUSED,
    ],
  ];
  for (const method of ["GET", "PATCH"] as const) {
    it.each(cases)(`${method}: %s`, async (_, setUp, status, message) => {
      const owner = await ownerWithProgram();
      const { token, path } = await setUp(owner);
      const response = await call(method, path ?? settingsPath(owner.programId), {
        ...(token ? { token } : {}),
        ...(method === "PATCH" ? { body: { name: "Not allowed" } } : {}),
      });
      expect(response.status).toBe(status);
      expect(response.body).toEqual(platform(status, message));
      const [row] = await db.select().from(programs).where(eq(programs.id, owner.programId));
      expect(row?.name).not.toBe("Not allowed");
    });
  }

  it("an active member (not owner) may read and change settings", async () => {
    const owner = await ownerWithProgram();
    const person = await signedInPerson();
    await addMember(owner.advertiserId, person.userId, "member");
    expect((await call("GET", settingsPath(owner.programId), { token: person.token })).status).toBe(200);
    const patched = await call("PATCH", settingsPath(owner.programId), {
      token: person.token,
      body: { hold_days: 3 },
    });
    expect(patched.status).toBe(200);
    const [entry] = await auditOf(owner.programId);
    expect(entry?.actorUserId).toBe(person.userId);
  });

  it("30 per minute per token, GET and PATCH counted apart", async () => {
    const headers = { "CF-Connecting-IP": "10.250.0.1" };
    const { owner, answers: reads } = await inOneWindow(async () => {
      const owner = await ownerWithProgram();
      const answers = [];
      for (let i = 0; i < 31; i++)
        answers.push(await call("GET", settingsPath(owner.programId), { token: owner.token, headers }));
      return { owner, answers };
    });
    expect(reads.slice(0, 30).map((r) => r.status)).toEqual(Array(30).fill(200));
    const refused = reads[30]!;
    expect(refused.status).toBe(429);
    expect(refused.body.error.code).toBe("rate_limited");
    expect(Number(refused.headers.get("Retry-After"))).toBeGreaterThan(0);
    const patch = await call("PATCH", settingsPath(owner.programId), {
      token: owner.token,
      headers,
      body: { hold_days: 1 },
    });
    expect(patch.status).toBe(200);
    expect(patch.headers.get("X-RateLimit-Remaining")).toBe("29");
  });
});
