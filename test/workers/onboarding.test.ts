import { sql } from "drizzle-orm";
import { afterEach, describe, expect, it, vi } from "vitest";
import { sha256Hex } from "../../lib/auth/api-keys.ts";
import { BASE, call, dashboardSignIn, setCookies } from "./dashboard-sign-in.ts";
import { db, postJson, unique } from "./harness.ts";

/**
 * The "Must show": a brand onboards itself, offline, as a new person would, with no SQL: sign in on
 * the local OpenID provider, create the workspace's first program, read its settings, regenerate the key,
 * connect a payments account, add a partner and a link, click through it, turn it off, get 410.
 */
describe("a new brand onboards itself", () => {
  const lines: string[] = [];
  afterEach(() => {
    vi.restoreAllMocks();
    lines.length = 0;
  });

  it("runs the whole flow, stores tokens and keys only as hashes, and logs none of them", async () => {
    // Record what the service writes to its logs (the calls still go through).
    for (const method of ["log", "info", "warn", "error"] as const) {
      const original = console[method].bind(console);
      vi.spyOn(console, method).mockImplementation((...args: unknown[]) => {
        lines.push(args.map(String).join(" "));
        original(...args);
      });
    }
    const email = `${unique("founder")}@new-brand.example`;

    // 1. Sign in on the local provider: the page gets its sign-in token in the __Host- cookie.
    const signedIn = await dashboardSignIn({ email, verified: true });
    expect(signedIn.status).toBe(303);
    const token = setCookies(signedIn).get("__Host-affiliate_session")!;
    const page = { cookie: token, origin: BASE };
    const session = await call("GET", "/api/v1/auth/session", page);
    expect(session.body.data.workspaces).toEqual([expect.objectContaining({ role: "owner" })]);
    expect((await call("GET", "/api/v1/programs", page)).body.data.programs).toEqual([]);

    // 2. The workspace's first program.
    const created = await call("POST", "/api/v1/programs", {
      ...page,
      body: {
        name: "New Brand",
        domain: "new-brand.example",
        commission_type: "percent",
        commission_rate: 20,
      },
    });
    expect(created.status).toBe(201);
    const programId = created.body.data.program.id as number;
    const firstKey = created.body.data.api_key as string;
    const testKey = created.body.data.test_api_key as string;

    // 3. Its settings: the key only masked, the Lead capture mode line.
    const settings = await call("GET", `/api/v1/programs/${programId}/settings`, page);
    expect(settings.status).toBe(200);
    expect(settings.body.data.api_key).toBe(`${firstKey.slice(0, 12)}...${firstKey.slice(-4)}`);
    expect(JSON.stringify(settings.body)).not.toContain(firstKey);
    expect(settings.body.data.summary).toContain(
      "Lead capture mode: Server required (browser leads are provisional until your server confirms them)",
    );

    // 4. Regenerate the key: the new one works, the first one stops.
    const regenerated = await call("POST", `/api/v1/programs/${programId}/api-keys/regenerate`, {
      ...page,
      body: { mode: "immediate" },
    });
    expect(regenerated.status).toBe(200);
    const apiKey = regenerated.body.data.api_key as string;
    expect((await call("GET", "/api/v1/programs/me/readiness", { token: apiKey })).status).toBe(200);
    expect((await call("GET", "/api/v1/programs/me/readiness", { token: firstKey })).status).toBe(401);

    // 5. Connect a payments account (set directly, as local use does), allow the shop's origin.
    const account = `acct_${crypto.randomUUID().replace(/-/g, "").slice(0, 16)}`;
    const connected = await call("PATCH", `/api/v1/programs/${programId}/settings`, {
      ...page,
      body: { stripe_account_id: account, allowed_origins: ["https://new-brand.example"] },
    });
    expect(connected.status).toBe(200);
    expect(connected.body.data.summary).toContain(`Payments: connected (${account})`);

    // 6. A partner and a link.
    const partner = await call("POST", `/api/v1/programs/${programId}/partners`, {
      ...page,
      body: { name: "First Partner", email: `${unique("partner")}@partners.example` },
    });
    expect(partner.status).toBe(201);
    const code = unique("launch");
    const link = await call("POST", `/api/v1/programs/${programId}/links`, {
      ...page,
      body: { partner_id: partner.body.data.partner.id, short_link: code },
    });
    expect(link.status).toBe(201);

    // 7. A visitor clicks through it.
    const click = await postJson("/api/v1/track/click", {
      affiliate_url: `https://new-brand.example/?via=${code}`,
    });
    expect(click.status).toBe(200);
    expect(click.body).toMatchObject({ success: true, click_id: expect.any(String), cookie_window_days: 60 });

    // 8. Turn the link off: the next click answers 410 link_disabled.
    const off = await call("PATCH", `/api/v1/programs/${programId}/links/${link.body.data.link.id}`, {
      ...page,
      body: { active: false },
    });
    expect(off.status).toBe(200);
    const gone = await postJson("/api/v1/track/click", {
      affiliate_url: `https://new-brand.example/?via=${code}`,
    });
    expect(gone.status).toBe(410);
    expect(gone.body).toMatchObject({ success: false, error: { code: "link_disabled" } });

    // Stored only as hashes: the sign-in token and every key appear nowhere in their tables.
    const userId = session.body.data.user.id as number;
    const tokenRows = await db.execute<{ token_hash: string; row: string }>(
      sql`select token_hash, row_to_json(t)::text as row from sign_in_tokens t where user_id = ${userId}`,
    );
    expect(tokenRows.rows.map((r) => r.token_hash)).toContain(await sha256Hex(token));
    for (const r of tokenRows.rows) expect(r.row).not.toContain(token);
    const keyRows = await db.execute<{ key_hash: string; row: string }>(
      sql`select key_hash, row_to_json(k)::text as row from program_api_keys k where program_id = ${programId}`,
    );
    const hashes = keyRows.rows.map((r) => r.key_hash);
    for (const key of [firstKey, testKey, apiKey]) {
      expect(hashes).toContain(await sha256Hex(key));
      for (const r of keyRows.rows) expect(r.row).not.toContain(key);
    }
    const audit = await db.execute<{ row: string }>(
      sql`select row_to_json(a)::text as row from audit_log a where program_id = ${programId}`,
    );
    expect(audit.rows.length).toBeGreaterThanOrEqual(5);
    for (const r of audit.rows)
      for (const secret of [firstKey, testKey, apiKey, token]) expect(r.row).not.toContain(secret);

    // And no token, key or email in the logs.
    expect(lines.length).toBeGreaterThan(0);
    for (const line of lines) {
      for (const secret of [token, firstKey, testKey, apiKey, email]) expect(line).not.toContain(secret);
    }
  });
});
