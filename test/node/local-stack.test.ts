import { mkdtemp, readFile, rm } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Stripe from "stripe";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type LocalStack, startLocalStack } from "../../dev/local-stack.ts";
import { DEV_STRIPE_WEBHOOK_SECRET, type Demo, seedDemo } from "../../dev/seed.ts";

// `npm run dev` end to end, in-process: SQL endpoint on PGlite in a temp folder, demo seed, the API,
// tracking and events workers built by esbuild and served by Miniflare on a free loopback port.

let dataDir: string;
let stack: LocalStack | undefined;
let demo: Demo;
let ipCounter = 0;

function freshIp(): string {
  ipCounter++;
  return `10.77.${(ipCounter >> 8) & 255}.${ipCounter & 255}`;
}

async function click(
  baseUrl: string,
  body: Record<string, unknown>,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await fetch(`${baseUrl}/api/v1/track/click`, {
    method: "POST",
    headers: { "Content-Type": "application/json", "CF-Connecting-IP": freshIp(), ...headers },
    body: JSON.stringify(body),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

const affiliateUrl = (code: string) => `https://shop.example/landing?aff=${code}`;

/**
 * In test mode the click checks a Bearer key against `additional_data.program_id`: a live key of ANOTHER
 * program answers 403, an unknown key is ignored (200). So 403 proves the key is known and live.
 */
async function keyIsLiveFor(baseUrl: string, key: string, otherProgram: Demo["programs"][number]) {
  const result = await click(
    baseUrl,
    {
      affiliate_url: affiliateUrl(otherProgram.active_links[0]),
      additional_data: { test_mode: true, program_id: otherProgram.program_id },
    },
    { Authorization: `Bearer ${key}` },
  );
  return result.status === 403;
}

async function portIsFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once("error", () => resolve(false));
    server.listen(port, "127.0.0.1", () => server.close(() => resolve(true)));
  });
}

async function demoCounts(s: LocalStack) {
  const { rows } = await s.sql.query(
    `select
       (select count(*) from advertisers where name = 'Demo advertiser') as advertisers,
       (select count(*) from programs where name like 'Demo program %') as programs,
       (select count(*) from partners where email like 'demo-partner-%@partners.example') as partners,
       (select count(*) from program_partners pp join programs p on p.id = pp.program_id
         where p.name like 'Demo program %') as memberships,
       (select count(*) from referral_links
         where short_link in ('code-a', 'code-b', 'code-off', 'code-c', 'code-d', 'code-off-2')) as links,
       (select count(*) from program_api_keys k join programs p on p.id = k.program_id
         where p.name like 'Demo program %' and k.revoked_at is null) as live_keys`,
  );
  return Object.fromEntries(Object.entries(rows[0] ?? {}).map(([k, v]) => [k, Number(v)]));
}

describe("local stack (npm run dev)", () => {
  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), "local-stack-test-"));
    stack = await startLocalStack({ dataDir, port: 0, logLevel: "error" });
    demo = JSON.parse(await readFile(join(dataDir, "demo.json"), "utf8")) as Demo;
  }, 60_000);

  afterAll(async () => {
    await stack?.stop();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  }, 30_000);

  it("runs the SQL endpoint behind a per-run secret the workers carry, and refuses statements without it", async () => {
    const s = stack!;
    const refused = await fetch(s.sql.url, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ query: "SELECT 1", params: [] }),
    });
    expect(refused.status).toBe(401);
    // The workers reach the database, so their DATABASE_URL carries the secret.
    const click = await fetch(`${s.baseUrl}/api/v1/track/click`, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({
        affiliate_url: `https://shop.example/?aff=${demo.programs[0]!.active_links[0]}`,
      }),
    });
    expect(click.status).toBe(200);
  });

  it("writes demo.json with two programs, their keys and links", () => {
    const s = stack!;
    expect(demo.base_url).toBe(s.baseUrl);
    expect(demo.sql_endpoint_url).toBe(s.sql.url);
    expect(demo.stripe_events_url).toBe(`${s.baseUrl}/webhooks/stripe`);
    expect(demo.stripe_webhook_secret).toBe(DEV_STRIPE_WEBHOOK_SECRET);
    expect(demo).toEqual(s.demo);
    const origins = [`http://localhost:${s.port}`, `http://127.0.0.1:${s.port}`, "http://localhost:3000"];
    const common = {
      attribution_window_days: 60,
      commission_type: "percent",
      commission_rate: 20,
      allowed_origins: origins,
    };
    expect(demo.programs).toHaveLength(2);
    expect(demo.programs[0]).toMatchObject({
      program_id: 1,
      lead_auth_policy: "server_required",
      hold_days: 0,
      active_links: ["code-a", "code-b"],
      disabled_link: "code-off",
      stripe_account_id: "acct_demo_1",
      ...common,
    });
    expect(demo.programs[1]).toMatchObject({
      program_id: 2,
      lead_auth_policy: "browser_allowed",
      hold_days: 30,
      active_links: ["code-c", "code-d"],
      disabled_link: "code-off-2",
      stripe_account_id: "acct_demo_2",
      ...common,
    });
    for (const program of demo.programs) {
      expect(program.api_key).toMatch(/^sk_live_/);
      expect(program.test_api_key).toMatch(/^sk_test_/);
    }
  });

  it("runs the local OpenID provider and lists the demo people (owner, member, blocked, unverified)", async () => {
    expect(demo.sign_in_url).toBe(`${stack!.baseUrl}/api/v1/auth/sign-in`);
    expect(demo.people.map((p) => [p.role, p.blocked, p.provider_email_verified])).toEqual([
      ["owner", false, true],
      ["member", false, true],
      ["member", true, true],
      ["member", false, false],
    ]);
    const discovery = await fetch(`${demo.oidc_issuer}/.well-known/openid-configuration`);
    expect(((await discovery.json()) as { issuer: string }).issuer).toBe(demo.oidc_issuer);
  });

  it("gives the two active links of a program to two different partners", async () => {
    const { rows } = await stack!.sql.query(
      "select program_id, count(distinct partner_id) as partners from referral_links where short_link = any($1::text[]) group by program_id",
      [demo.programs.flatMap((p) => p.active_links)],
    );
    expect(rows.map((r) => Number(r.partners))).toEqual([2, 2]);
  });

  it("records a click on an active link", async () => {
    const result = await click(stack!.baseUrl, {
      affiliate_url: affiliateUrl(demo.programs[0]!.active_links[0]),
    });
    expect(result.status).toBe(200);
    expect(result.body).toMatchObject({ success: true, cookie_window_days: 60 });
    expect(result.body.click_id).toMatch(/^clk_/);
  });

  it("answers 410 on the disabled link", async () => {
    const result = await click(stack!.baseUrl, {
      affiliate_url: affiliateUrl(demo.programs[0]!.disabled_link),
    });
    expect(result.status).toBe(410);
    expect(result.body).toMatchObject({ success: false, error: { code: "link_disabled" } });
  });

  it("routes the tracking and console paths to their workers and every other path to the API worker", async () => {
    const base = stack!.baseUrl;
    expect(stack!.workers.map((w) => w.name)).toEqual([
      "affiliate-api",
      "affiliate-tracking",
      "affiliate-console",
      "affiliate-stripe-events",
    ]);
    // The script, with a cache-buster too (a route is matched with the query string).
    for (const path of ["/tracker.js", "/tracker.js?v=2"]) {
      const script = await fetch(`${base}${path}`);
      expect(script.status).toBe(200);
      expect(script.headers.get("Content-Type")).toContain("javascript");
    }
    // Each worker answers 404 for the others' routes: a 200 shows which one was reached.
    const auth = { Authorization: `Bearer ${demo.programs[0]!.api_key}` };
    expect((await fetch(`${base}/api/v1/cli/status`, { headers: auth })).status).toBe(200);
    expect((await fetch(`${base}/api/v1/programs/me/readiness`, { headers: auth })).status).toBe(200);
    expect((await fetch(`${base}/openapi.json`)).status).toBe(200);
    expect((await fetch(`${base}/docs`)).status).toBe(200);
    expect((await fetch(`${base}/dashboard`, { redirect: "manual" })).status).not.toBe(404);
    // A path no worker's routes name reaches the first worker of the stack (every worker serves /healthz).
    expect((await fetch(`${base}/healthz`)).status).toBe(200);
    // (Test events, console worker to tracking worker through its binding: cli-tool.test.ts's `test chain`.)
  });

  it("routes /webhooks/* to the events worker, which records a signed event of a demo account", async () => {
    const program = demo.programs[0]!;
    const clicked = await click(stack!.baseUrl, { affiliate_url: affiliateUrl(program.active_links[0]) });
    const paymentIntent = `pi_local_${Date.now()}`;
    const payload = JSON.stringify({
      id: `evt_local_${Date.now()}`,
      object: "event",
      account: program.stripe_account_id,
      api_version: "2026-10-28.endive",
      created: Math.floor(Date.now() / 1000),
      livemode: true,
      type: "checkout.session.completed",
      data: {
        object: {
          id: `cs_local_${Date.now()}`,
          object: "checkout.session",
          mode: "payment",
          payment_status: "paid",
          amount_total: 5000,
          currency: "usd",
          customer: "cus_local",
          customer_details: { email: "local@example.com" },
          payment_intent: paymentIntent,
          metadata: { service_click_id: String(clicked.body.click_id) },
        },
      },
    });
    const send = (signature: string) =>
      fetch(demo.stripe_events_url, {
        method: "POST",
        headers: { "Content-Type": "application/json", "Stripe-Signature": signature },
        body: payload,
      });
    const signature = Stripe.webhooks.generateTestHeaderString({
      payload,
      secret: demo.stripe_webhook_secret,
    });
    const accepted = await send(signature);
    expect(accepted.status).toBe(200);
    expect(await accepted.json()).toMatchObject({ received: true, outcome: "recorded" });
    const { rows } = await stack!.sql.query(
      "select source, program_id from affiliate_sale_events where processor_event_id = $1",
      [paymentIntent],
    );
    expect(rows.map((r) => [r.source, Number(r.program_id)])).toEqual([["stripe", program.program_id]]);

    const forged = await send(Stripe.webhooks.generateTestHeaderString({ payload, secret: "whsec_wrong" }));
    expect(forged.status).toBe(400);
  });

  it("serves the OpenAPI document", async () => {
    const response = await fetch(`${stack!.baseUrl}/openapi.json`);
    expect(response.status).toBe(200);
    expect(((await response.json()) as { paths: object }).paths).toHaveProperty("/api/v1/track/click");
  });

  it("keeps the same keys and creates no duplicates when seeding again", async () => {
    const s = stack!;
    const [p1, p2] = demo.programs as [Demo["programs"][number], Demo["programs"][number]];
    expect(await keyIsLiveFor(s.baseUrl, p2.test_api_key, p1)).toBe(true);
    expect(await keyIsLiveFor(s.baseUrl, p1.api_key, p2)).toBe(true);
    const before = await demoCounts(s);
    expect(before).toEqual({
      advertisers: 1,
      programs: 2,
      partners: 4,
      memberships: 4,
      links: 6,
      live_keys: 4,
    });

    const again = await seedDemo(s.sql, {
      baseUrl: s.baseUrl,
      dataDir,
      ...(demo.oidc_issuer ? { oidcIssuer: demo.oidc_issuer } : {}),
    });
    expect(again).toEqual(demo);
    expect(await demoCounts(s)).toEqual(before);
    expect(await keyIsLiveFor(s.baseUrl, p2.test_api_key, p1)).toBe(true);
    expect(await keyIsLiveFor(s.baseUrl, p1.api_key, p2)).toBe(true);
  });

  // The settings, the dashboard and the CLI mask a key as its prefix and last four (`sk_live_AbCd...wxyz`);
  // the demo keys were stored without their last four, so they showed as `sk_live_AbCd...` only. A data
  // folder seeded before keeps its keys and gets their last four on the next seed.
  it("stores each demo key's last four, also for a key kept from an earlier seed", async () => {
    const s = stack!;
    const lastFours = async () =>
      (
        await s.sql.query(
          `select k.key_last4 from program_api_keys k join programs p on p.id = k.program_id
            where p.name like 'Demo program %' and k.revoked_at is null order by k.id`,
        )
      ).rows.map((row) => row.key_last4);
    const expected = demo.programs.flatMap((p) => [p.api_key.slice(-4), p.test_api_key.slice(-4)]).sort();
    expect([...(await lastFours())].sort()).toEqual(expected);

    // As a seed before this one left them (the demo programs' keys only: the stack may hold others).
    await s.sql.query(
      `update program_api_keys set key_last4 = null
        where program_id in (select id from programs where name like 'Demo program %')`,
    );
    const again = await seedDemo(s.sql, {
      baseUrl: s.baseUrl,
      dataDir,
      ...(demo.oidc_issuer ? { oidcIssuer: demo.oidc_issuer } : {}),
    });
    expect(again).toEqual(demo);
    expect([...(await lastFours())].sort()).toEqual(expected);
  });

  it("frees its port on stop, and a restart on the same data keeps the demo", async () => {
    const first = stack!;
    const port = first.port;
    await first.stop();
    stack = undefined;
    expect(await portIsFree(port)).toBe(true);

    // `npm run dev` again: same data folder, same port.
    stack = await startLocalStack({ dataDir, port, logLevel: "error" });
    expect(stack.demo?.base_url).toBe(demo.base_url);
    expect(stack.demo?.programs).toEqual(demo.programs);
    expect(await demoCounts(stack)).toEqual({
      advertisers: 1,
      programs: 2,
      partners: 4,
      memberships: 4,
      links: 6,
      live_keys: 4,
    });
    const [p1, p2] = demo.programs as [Demo["programs"][number], Demo["programs"][number]];
    expect(await keyIsLiveFor(stack.baseUrl, p2.api_key, p1)).toBe(true);
    const result = await click(stack.baseUrl, { affiliate_url: affiliateUrl(p2.active_links[1]) });
    expect(result.status).toBe(200);

    await stack.stop();
    stack = undefined;
    expect(await portIsFree(port)).toBe(true);
  }, 60_000);
});
