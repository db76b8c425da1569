import { sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { issueApiKey } from "../../lib/auth/api-keys.ts";
import { programApiKeys } from "../../schema/index.ts";
import { cli } from "./cli-harness.ts";
import { createProgram, db, postJson, unique } from "./harness.ts";
import { bearer, leadPath } from "./lead-helpers.ts";
import { getJson, readinessOf, readinessPath } from "./readiness-helpers.ts";
import { countDatabaseRoundTrips } from "./round-trip-counter.ts";

const roundTripsOf = countDatabaseRoundTrips();

describe("GET /api/v1/programs/me/readiness: a program walked from empty to ready", () => {
  it("turns each check green as the matching event is recorded", async () => {
    const p = await createProgram({ allowedOrigins: [] });
    const landing = `https://${unique("shop")}.example`;

    // Empty program: the key and the link exist, nothing else.
    let r = await readinessOf(p.apiKey);
    expect(r.body).not.toHaveProperty("success");
    expect(r.body.program_id).toBe(p.programId);
    expect(r.verdict).toBe("not_ready");
    expect(r.status).toEqual({
      api_key: "pass",
      referral_link: "pass",
      allowed_origins: "warn",
      clicks_received: "fail",
      click_origin: "warn",
      leads_settled: "fail",
      sale_with_commission: "fail",
      test_event: "warn",
      sales_path: "fail",
      refunds_received: "warn",
    });
    expect(r.body.next_step).toMatchObject({ check: "clicks_received" });

    // A test click and a test lead with the key count for the test check only.
    const testClick = await postJson("/api/v1/track/click", {
      affiliate_url: `${landing}/?aff=${p.links[0]}`,
      additional_data: { test_mode: true },
    });
    expect(testClick.status).toBe(200);
    const testLead = await postJson(
      leadPath,
      { click_id: testClick.body.click_id, customer_key: unique("t"), additional_data: { test_mode: true } },
      bearer(p.apiKey),
    );
    expect(testLead.status).toBe(200);
    r = await readinessOf(p.apiKey);
    expect(r.status.test_event).toBe("pass");
    expect(r.status.clicks_received).toBe("fail");
    expect(r.status.leads_settled).toBe("fail");

    // A live click from an origin that is not allowed (none are yet).
    const click = await postJson("/api/v1/track/click", {
      affiliate_url: `${landing}/pricing?aff=${p.links[0]}&utm_source=news`,
    });
    expect(click.status).toBe(200);
    const clickId = click.body.click_id as string;
    r = await readinessOf(p.apiKey);
    expect(r.status.clicks_received).toBe("pass");
    expect(r.check("clicks_received").evidence).toMatchObject({ count: 1, last_origin: landing });
    expect(r.status.click_origin).toBe("warn");
    expect(r.check("click_origin").evidence).toMatchObject({
      last_other_origin: landing,
      from_allowed_origin: 0,
    });

    // Allowed origins set: both origin checks pass.
    await db.execute(
      sql`update programs set allowed_origins = array[${landing}]::text[] where id = ${p.programId}`,
    );
    r = await readinessOf(p.apiKey);
    expect(r.status.allowed_origins).toBe("pass");
    expect(r.status.click_origin).toBe("pass");

    // A browser lead under server_required is provisional: a warning naming the server-mode lead.
    const customerKey = unique("cust");
    const browserLead = await postJson(leadPath, { click_id: clickId, customer_key: customerKey });
    expect(browserLead.body.provisional).toBe(true);
    r = await readinessOf(p.apiKey);
    expect(r.status.leads_settled).toBe("warn");
    expect(r.check("leads_settled").evidence).toMatchObject({ count: 0, provisional: { count: 1 } });

    // The server-mode lead settles it.
    const serverLead = await postJson(
      leadPath,
      { click_id: clickId, customer_key: customerKey },
      bearer(p.apiKey),
    );
    expect(serverLead.status).toBe(200);
    r = await readinessOf(p.apiKey);
    expect(r.status.leads_settled).toBe("pass");

    // A sale call with a commission: the sale checks pass.
    const transactionId = unique("txn");
    const sale = await postJson(
      "/api/v1/track/sale",
      { transaction_id: transactionId, amount_cents: 5000, customer_key: customerKey },
      bearer(p.apiKey),
    );
    expect(sale.status).toBe(200);
    r = await readinessOf(p.apiKey);
    expect(r.status.sale_with_commission).toBe("pass");
    expect(r.status.sales_path).toBe("pass");
    expect(r.verdict).toBe("almost_ready");
    expect(r.body.next_step).toMatchObject({ check: "refunds_received" });

    // A refund: every check passes.
    const refund = await postJson(
      "/api/v1/track/refund",
      { transaction_id: transactionId, refund_amount_cents: 1000, refund_id: unique("re") },
      bearer(p.apiKey),
    );
    expect(refund.status).toBe(200);
    r = await readinessOf(p.apiKey);
    expect(r.verdict).toBe("ready");
    expect(r.body.next_step).toBeNull();
    expect(r.body.counts).toEqual({ pass: 10, warn: 0, fail: 0, required: 6, required_passing: 6 });

    // Connecting the payments provider while sale calls arrive: the double-count warning (spec section 6).
    await db.execute(
      sql`update programs set stripe_account_id = ${unique("acct")} where id = ${p.programId}`,
    );
    r = await readinessOf(p.apiKey);
    expect(r.status.sales_path).toBe("warn");
    expect(r.verdict).toBe("almost_ready");
  });

  it("a key marked for rotation: the api_key check warns, the response carries the rotation notice", async () => {
    const p = await createProgram();
    const rotateBy = new Date(Date.now() + 7 * 86_400_000);
    await db.execute(
      sql`update program_api_keys set rotation_marked_at = now(), rotate_by = ${rotateBy.toISOString()}::timestamptz
          where program_id = ${p.programId} and not is_test`,
    );
    const response = await getJson(readinessPath, bearer(p.apiKey));
    expect(response.status).toBe(200);
    expect(response.headers.get("Sunset")).toBe(rotateBy.toUTCString());
    const checks = response.body.checks as Array<{
      id: string;
      status: string;
      evidence: Record<string, unknown>;
    }>;
    const apiKey = checks.find((c) => c.id === "api_key");
    expect(apiKey?.status).toBe("warn");
    expect(apiKey?.evidence.earliest_rotate_by).toBe(rotateBy.toISOString());
    expect((response.body.warnings as Array<{ code: string }>)[0]?.code).toBe("api_key_rotation_required");
  });

  it("counts at most the newest 100 events of a kind, and a test sale's refund is not a live refund", async () => {
    const p = await createProgram();
    await db.execute(sql`
      insert into affiliate_click_events (click_id, program_id, partner_id, link_id, affiliate_url, is_test)
      select ${unique("many")} || '-' || g, l.program_id, l.partner_id, l.id, 'https://shop.example/?aff=x', false
      from (select * from referral_links where program_id = ${p.programId} order by id limit 1) l,
           generate_series(1, 101) g`);
    await db.execute(sql`
      with s as (
        insert into affiliate_sale_events (processor_event_id, program_id, amount_cents, currency, is_test)
        values (${unique("test-sale")}, ${p.programId}, 5000, 'USD', true) returning id)
      insert into refunds (sale_id, idempotency_key, amount_cents, refunded_total_cents)
      select id, 'k', 100, 100 from s`);
    const r = await readinessOf(p.apiKey);
    expect(r.body.evidence_sample_size).toBe(100);
    expect(r.check("clicks_received").evidence).toMatchObject({ count: 100, count_is_lower_bound: true });
    expect(r.status.refunds_received).toBe("warn");
    expect(r.check("refunds_received").evidence).toMatchObject({ count: 0, count_is_lower_bound: false });
  });

  it("does not count the test chain's own link as the program's referral link", async () => {
    const p = await createProgram();
    await db.execute(sql`update referral_links set is_active = false where program_id = ${p.programId}`);
    const chain = await cli("POST", "/api/v1/cli/test-event", { token: p.apiKey, body: { type: "chain" } });
    expect(chain.status).toBe(200);
    const r = await readinessOf(p.apiKey);
    expect(r.status.referral_link).toBe("fail");
    expect(r.check("referral_link")).toMatchObject({
      message: "The program has no active referral link.",
      evidence: { active_links: 0, active_links_with_partner: 0 },
    });
  });

  it("counts for test_event only the test sales sent with the key, not the provider's test-mode payments", async () => {
    const p = await createProgram();
    await db.execute(sql`
      insert into affiliate_sale_events (processor_event_id, program_id, amount_cents, is_test, source)
      values (${unique("pi_test")}, ${p.programId}, 1000, true, 'stripe')`);
    let r = await readinessOf(p.apiKey);
    expect(r.status.test_event).toBe("warn");
    const sale = await postJson(
      "/api/v1/track/sale",
      { transaction_id: unique("t"), amount_cents: 1000, additional_data: { test_mode: true } },
      bearer(p.apiKey),
    );
    expect(sale.status).toBe(200);
    r = await readinessOf(p.apiKey);
    expect(r.status.test_event).toBe("pass");
    expect(r.check("test_event").evidence).toMatchObject({ count: 1 });
  });

  it("uses exactly one database round trip", async () => {
    const p = await createProgram();
    expect(await roundTripsOf(() => readinessOf(p.apiKey))).toBe(1);
    expect(await roundTripsOf(() => getJson(readinessPath, bearer("sk_live_unknown")))).toBe(1);
    expect(await roundTripsOf(() => getJson(readinessPath))).toBe(0);
  });
});

describe("GET /api/v1/programs/me/readiness: errors in the typed envelope", () => {
  const cases: Array<{
    name: string;
    headers: () => Promise<Record<string, string>>;
    status: number;
    code: string;
    message: string;
  }> = [
    {
      name: "no Authorization header",
      headers: async () => ({}),
      status: 401,
      code: "invalid_key",
      message: "Missing or malformed Authorization header. Expected: Bearer <token>.",
    },
    {
      name: "not a Bearer header",
      headers: async () => ({ Authorization: "Basic abc" }),
      status: 401,
      code: "invalid_key",
      message: "Missing or malformed Authorization header. Expected: Bearer <token>.",
    },
    {
      name: "empty Bearer token",
      headers: async () => ({ Authorization: "Bearer   " }),
      status: 401,
      code: "invalid_key",
      message: "Missing API token.",
    },
    {
      name: "unknown token",
      headers: async () => bearer(`sk_live_${unique("nope")}`),
      status: 401,
      code: "invalid_key",
      message: "Invalid API token.",
    },
    {
      name: "revoked key",
      headers: async () => {
        const p = await createProgram();
        await db.execute(
          sql`update program_api_keys set revoked_at = now() where program_id = ${p.programId}`,
        );
        return bearer(p.apiKey);
      },
      status: 401,
      code: "invalid_key",
      message: "Invalid API token.",
    },
    {
      name: "key past its rotation deadline",
      headers: async () => {
        const p = await createProgram();
        const key = await issueApiKey(false);
        await db.insert(programApiKeys).values({
          programId: p.programId,
          keyHash: key.keyHash,
          keyPrefix: key.keyPrefix,
          rotationMarkedAt: new Date(Date.now() - 86_400_000),
          rotateBy: new Date(Date.now() - 1000),
        });
        return bearer(key.key);
      },
      status: 401,
      code: "api_key_rotation_required",
      message: "This API key was retired after its rotation deadline.",
    },
  ];

  it.each(cases)("$name: $status $code", async ({ headers, status, code, message }) => {
    const response = await getJson(readinessPath, await headers());
    expect(response.status).toBe(status);
    expect(response.body).not.toHaveProperty("data");
    expect(response.body).not.toHaveProperty("success");
    expect((response.body.error as { code: string }).code).toBe(code);
    expect((response.body.error as { message: string }).message).toBe(message);
    expect(response.headers.get("X-Request-ID")).toBeTruthy();
  });
});
