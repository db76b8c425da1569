import { SELF } from "cloudflare:test";
import { and, eq } from "drizzle-orm";
import { beforeAll, describe, expect, it } from "vitest";
import {
  DASHBOARD_ASSETS_VERSION,
  DASHBOARD_SCRIPT,
  DASHBOARD_STYLE,
} from "../../functions/api/generated/dashboard-assets.ts";
import { DASHBOARD_CSP, PROGRAM_REFUSED_TITLE } from "../../functions/api/routes/dashboard/index.tsx";
import { ACCOUNT_BLOCKED_MESSAGE } from "../../lib/identity/identity-errors.ts";
import { programs, users, workspaceMembers } from "../../schema/index.ts";
import {
  anotherToken,
  BASE,
  call,
  expireToken,
  type Person,
  programOf,
  setMembershipStatus,
  signInPerson,
} from "./dashboard-tracking-helpers.ts";
import { createProgram, db, freshIp, type ProgramFixture } from "./harness.ts";

/** The page as a browser asks for it: the session cookie (or none), never a Bearer header. */
async function page(path: string, options: { cookie?: string; headers?: Record<string, string> } = {}) {
  const headers: Record<string, string> = { "CF-Connecting-IP": freshIp(), ...options.headers };
  if (options.cookie) headers.Cookie = `__Host-affiliate_session=${options.cookie}`;
  const response = await SELF.fetch(`${BASE}${path}`, { headers, redirect: "manual" });
  return { status: response.status, headers: response.headers, text: await response.text() };
}

let owner: Person;
let program: ProgramFixture;
let foreignProgram: ProgramFixture;
let noPrograms: Person;

beforeAll(async () => {
  owner = await signInPerson();
  program = await programOf(owner);
  foreignProgram = await createProgram();
  noPrograms = await signInPerson();
});

async function personWith(setup: (person: Person) => Promise<void>): Promise<Person> {
  const person = await signInPerson();
  await setup(person);
  return person;
}

describe("dashboard page: who gets what", () => {
  const cases: {
    case: string;
    request: () => Promise<{ path: string; cookie?: string; headers?: Record<string, string> }>;
    status: 200 | 302 | 403;
    location?: string;
    contains?: string[];
  }[] = [
    {
      case: "no session",
      request: async () => ({ path: "/dashboard" }),
      status: 302,
      location: "/api/v1/auth/sign-in",
    },
    {
      case: "an unknown sign-in token",
      request: async () => ({ path: "/dashboard", cookie: "dst_not_a_real_token_at_all_000000000" }),
      status: 302,
      location: "/api/v1/auth/sign-in",
    },
    {
      case: "an expired sign-in token",
      request: async () => {
        const token = await anotherToken(owner);
        await expireToken(token);
        return { path: "/dashboard", cookie: token };
      },
      status: 302,
      location: "/api/v1/auth/sign-in",
    },
    {
      case: "a revoked sign-in token (signed out)",
      request: async () => {
        const token = await anotherToken(owner);
        expect((await call("POST", "/api/v1/auth/sign-out", { token })).status).toBe(200);
        return { path: "/dashboard", cookie: token };
      },
      status: 302,
      location: "/api/v1/auth/sign-in",
    },
    {
      case: "a program API key in the cookie",
      request: async () => ({ path: "/dashboard", cookie: program.apiKey }),
      status: 302,
      location: "/api/v1/auth/sign-in",
    },
    {
      case: "a sign-in token as Bearer (the page takes the cookie only)",
      request: async () => ({
        path: "/dashboard",
        headers: { Authorization: `Bearer ${await anotherToken(owner)}` },
      }),
      status: 302,
      location: "/api/v1/auth/sign-in",
    },
    {
      case: "a suspended account",
      request: async () => {
        const person = await personWith(async (p) => {
          await db.update(users).set({ blockedAt: new Date() }).where(eq(users.id, p.userId));
        });
        return { path: "/dashboard", cookie: person.token };
      },
      status: 403,
      contains: [ACCOUNT_BLOCKED_MESSAGE],
    },
    {
      case: "another workspace's program",
      request: async () => ({ path: `/dashboard?program=${foreignProgram.programId}`, cookie: owner.token }),
      status: 403,
      contains: [PROGRAM_REFUSED_TITLE],
    },
    {
      case: "a program that does not exist",
      request: async () => ({ path: "/dashboard?program=2147483000", cookie: owner.token }),
      status: 403,
      contains: [PROGRAM_REFUSED_TITLE],
    },
    {
      case: "a malformed program id",
      request: async () => ({ path: "/dashboard?program=1%3Bdrop", cookie: owner.token }),
      status: 403,
      contains: [PROGRAM_REFUSED_TITLE],
    },
    {
      case: "a removed membership",
      request: async () => {
        const person = await signInPerson();
        const own = await programOf(person);
        await setMembershipStatus(person, "removed");
        return { path: `/dashboard?program=${own.programId}`, cookie: person.token };
      },
      status: 403,
      contains: [PROGRAM_REFUSED_TITLE],
    },
    {
      case: "a person without programs asking for one",
      request: async () => ({ path: "/dashboard?program=abc", cookie: noPrograms.token }),
      status: 403,
      contains: [PROGRAM_REFUSED_TITLE],
    },
    {
      case: "a person without programs: the empty state",
      request: async () => ({ path: "/dashboard", cookie: noPrograms.token }),
      status: 200,
      contains: ["No programs yet", "@people.example"],
    },
    {
      case: "the owner without a choice: the first program",
      request: async () => ({ path: "/dashboard", cookie: owner.token }),
      status: 200,
      contains: ['id="program-view" data-program-id="', 'id="regenerate-key"'],
    },
    {
      case: "the signed-out page",
      request: async () => ({ path: "/dashboard/signed-out" }),
      status: 200,
      contains: ["You are signed out", 'href="/dashboard"'],
    },
  ];

  it.each(cases)("$case -> $status", async ({ request, status, location, contains }) => {
    const { path, ...options } = await request();
    const response = await page(path, options);
    expect(response.status).toBe(status);
    if (location) expect(response.headers.get("Location")).toBe(location);
    for (const text of contains ?? []) expect(response.text).toContain(text);
    if (status !== 302) {
      expect(response.headers.get("Content-Type")).toMatch(/^text\/html/);
      expect(response.headers.get("Content-Security-Policy")).toBe(DASHBOARD_CSP);
    }
    expect(response.headers.get("Cache-Control")).toBe("no-store");
  });
});

describe("dashboard page: what it shows", () => {
  it("every section of the chosen program, keys masked, with a strict CSP", async () => {
    const response = await page(`/dashboard?program=${program.programId}`, { cookie: owner.token });
    expect(response.status).toBe(200);
    const csp = response.headers.get("Content-Security-Policy") ?? "";
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(response.headers.get("X-Frame-Options")).toBe("DENY");
    const html = response.text;
    for (const id of ["readiness", "performance", "events", "analytics", "links", "settings"]) {
      expect(html).toContain(`id="${id}"`);
    }
    for (const check of [
      "api_key",
      "referral_link",
      "clicks_received",
      "sale_with_commission",
      "test_event",
    ]) {
      expect(html).toContain(`data-check="${check}"`);
    }
    expect(html).toContain('id="run-verification"');
    expect(html).toContain("Lead capture mode: ");
    expect(html).toContain(program.links[0]);
    expect(html).toContain('id="performance-chart"');
    expect(html).toContain(`src="/dashboard/assets/app-${DASHBOARD_ASSETS_VERSION}.js"`);
    // No secret: the keys appear masked only, and no inline script exists for the CSP to refuse.
    expect(html).not.toContain(program.apiKey);
    expect(html).not.toContain(program.testApiKey);
    expect(html).not.toContain(owner.token);
    expect(html).toContain(`${program.apiKey.slice(0, 12)}...`);
    expect(html).not.toMatch(/<script(?![^>]*\ssrc=)[^>]*>/);
  });

  it("escapes what people typed (a program named like markup)", async () => {
    const own = await programOf(owner);
    await db
      .update(programs)
      .set({ name: `<img src=x onerror=alert(1)>"&` })
      .where(eq(programs.id, own.programId));
    const response = await page(`/dashboard?program=${own.programId}`, { cookie: owner.token });
    expect(response.status).toBe(200);
    expect(response.text).not.toContain("<img src=x");
    expect(response.text).toContain("&lt;img src=x onerror=alert(1)&gt;&quot;&amp;");
  });

  it("a member sees no key regeneration", async () => {
    const member = await signInPerson();
    const own = await programOf(member);
    await db
      .update(workspaceMembers)
      .set({ role: "member" })
      .where(
        and(
          eq(workspaceMembers.userId, member.userId),
          eq(workspaceMembers.advertiserId, member.advertiserId),
        ),
      );
    const response = await page(`/dashboard?program=${own.programId}`, { cookie: member.token });
    expect(response.status).toBe(200);
    expect(response.text).not.toContain('id="regenerate-key"');
    expect(response.text).toContain("Only a workspace owner can regenerate API keys.");
  });

  it("groups the analytics table as asked, and falls back to partner", async () => {
    const bySource = await page(`/dashboard?program=${program.programId}&group_by=utm_source`, {
      cookie: owner.token,
    });
    expect(bySource.text).toContain('<option value="utm_source" selected="">');
    const unknown = await page(`/dashboard?program=${program.programId}&group_by=nope`, {
      cookie: owner.token,
    });
    expect(unknown.status).toBe(200);
    expect(unknown.text).toContain('<option value="partner" selected="">');
  });

  it("the page's writes go through routes that refuse another site's cookie-authenticated request", async () => {
    const path = `/api/v1/programs/${program.programId}/links`;
    const body = { partner_id: program.partnerIds[0] };
    const cases = [
      { origin: undefined, status: 403 },
      { origin: "https://evil.example", status: 403 },
      { origin: BASE, status: 201 },
    ];
    for (const { origin, status } of cases) {
      const answer = await call("POST", path, { cookie: owner.token, body, ...(origin ? { origin } : {}) });
      expect(answer.status, String(origin)).toBe(status);
      if (status === 403) expect(answer.body.error.message).toBe("Cross-site request refused");
    }
  });
});

describe("dashboard assets", () => {
  const cases = [
    {
      file: `app-${DASHBOARD_ASSETS_VERSION}.js`,
      status: 200,
      type: /^application\/javascript/,
      body: DASHBOARD_SCRIPT,
    },
    { file: `app-${DASHBOARD_ASSETS_VERSION}.css`, status: 200, type: /^text\/css/, body: DASHBOARD_STYLE },
    { file: "app-000000000000.js", status: 404 },
    { file: "other.js", status: 404 },
  ];
  it.each(cases)("$file -> $status", async ({ file, status, type, body }) => {
    const response = await page(`/dashboard/assets/${file}`);
    expect(response.status).toBe(status);
    if (type) {
      expect(response.headers.get("Content-Type")).toMatch(type);
      expect(response.headers.get("Cache-Control")).toBe("public, max-age=31536000, immutable");
      expect(response.text).toBe(body);
    }
  });
});
