import { eq, sql } from "drizzle-orm";
import { beforeAll, describe, expect, it } from "vitest";
import { customers, programApiKeys, programPartners, referralLinks } from "../../schema/index.ts";
import { createProgram, db, type ProgramFixture, postJson, unique } from "./harness.ts";
import {
  ageClick,
  balanceOf,
  click,
  commissionsOf,
  customersOf,
  ledgerOf,
  sale,
  salePath,
  salesOf,
  txn,
} from "./sale-harness.ts";

const platform = (status: number, name: string, message: string, code: string, details: object = {}) => ({
  data: null,
  error: { status, name, message, details, code },
});
const bad = (message: string) => platform(400, "BadRequestError", message, "invalid_request");
const noAttribution = (message: string) => platform(400, "BadRequestError", message, "no_attribution");
const unauthorized = (message: string) => platform(401, "UnauthorizedError", message, "unauthorized");
const providers =
  "stripe, paddle, paypal, braintree, adyen, square, chargebee, recurly, lemonsqueezy, razorpay, other";

describe("POST /api/v1/track/sale errors (nothing recorded)", () => {
  let p: ProgramFixture;
  let other: ProgramFixture;
  let clickId: string;
  let foreignClickId: string;
  const foreignCustomerKey = unique("cust-other");
  const siblingCustomerKey = unique("cust-sibling");
  beforeAll(async () => {
    [p, other] = await Promise.all([createProgram(), createProgram()]);
    // A second program of p's own workspace (brand), with a settled customer of its own.
    const sibling = await createProgram({ advertiserId: p.advertiserId });
    clickId = await click(p);
    foreignClickId = await click(other);
    const settled = await Promise.all([
      postJson(
        "/api/v1/track/lead",
        { click_id: foreignClickId, customer_key: foreignCustomerKey },
        { Authorization: `Bearer ${other.apiKey}` },
      ),
      postJson(
        "/api/v1/track/lead",
        { click_id: await click(sibling), customer_key: siblingCustomerKey },
        { Authorization: `Bearer ${sibling.apiKey}` },
      ),
    ]);
    expect(settled.map((response) => response.status)).toEqual([200, 200]);
  });

  const days = 86_400_000;
  const cases: Array<{
    name: string;
    body: () => unknown;
    headers?: () => Record<string, string>;
    status: number;
    expected: unknown;
  }> = [
    {
      name: "no Authorization header",
      body: () => ({}),
      headers: () => ({}),
      status: 401,
      expected: unauthorized("Missing or malformed Authorization header. Expected: Bearer <token>"),
    },
    {
      name: "Basic credentials",
      body: () => ({}),
      headers: () => ({ Authorization: "Basic abc" }),
      status: 401,
      expected: unauthorized("Missing or malformed Authorization header. Expected: Bearer <token>"),
    },
    {
      name: "empty Bearer token",
      body: () => ({}),
      headers: () => ({ Authorization: "Bearer   " }),
      status: 401,
      expected: unauthorized("Missing API token"),
    },
    {
      name: "unknown token",
      body: () => ({ transaction_id: txn(), amount_cents: 100, click_id: clickId }),
      headers: () => ({ Authorization: "Bearer sk_live_nope" }),
      status: 401,
      expected: unauthorized("Invalid API token"),
    },
    {
      name: "missing transaction_id",
      body: () => ({ amount_cents: 100, click_id: clickId }),
      status: 400,
      expected: bad("transaction_id is required and must be a string"),
    },
    {
      name: "null transaction_id (null is absent)",
      body: () => ({ transaction_id: null, amount_cents: 100, click_id: clickId }),
      status: 400,
      expected: bad("transaction_id is required and must be a string"),
    },
    {
      name: "null amount_cents (null is absent)",
      body: () => ({ transaction_id: txn(), amount_cents: null, click_id: clickId }),
      status: 400,
      expected: bad("amount_cents is required and must be a positive integer"),
    },
    {
      name: "numeric transaction_id",
      body: () => ({ transaction_id: 5, amount_cents: 100 }),
      status: 400,
      expected: bad("transaction_id is required and must be a string"),
    },
    {
      name: "empty transaction_id",
      body: () => ({ transaction_id: " ", amount_cents: 100 }),
      status: 400,
      expected: bad("transaction_id is required and must be a string"),
    },
    {
      name: "missing amount_cents",
      body: () => ({ transaction_id: txn(), click_id: clickId }),
      status: 400,
      expected: bad("amount_cents is required and must be a positive integer"),
    },
    {
      name: "zero amount_cents",
      body: () => ({ transaction_id: txn(), amount_cents: 0 }),
      status: 400,
      expected: bad("amount_cents is required and must be a positive integer"),
    },
    {
      name: "negative amount_cents",
      body: () => ({ transaction_id: txn(), amount_cents: -5 }),
      status: 400,
      expected: bad("amount_cents is required and must be a positive integer"),
    },
    {
      name: "fractional amount_cents",
      body: () => ({ transaction_id: txn(), amount_cents: 10.5 }),
      status: 400,
      expected: bad("amount_cents is required and must be a positive integer"),
    },
    {
      name: "string amount_cents",
      body: () => ({ transaction_id: txn(), amount_cents: "100" }),
      status: 400,
      expected: bad("amount_cents is required and must be a positive integer"),
    },
    {
      name: "occurred_at 31 days old",
      body: () => ({
        transaction_id: txn(),
        amount_cents: 100,
        click_id: clickId,
        occurred_at: new Date(Date.now() - 31 * days).toISOString(),
      }),
      status: 400,
      expected: bad("occurred_at must be an ISO 8601 time within the last 30 days"),
    },
    {
      name: "occurred_at 10 minutes ahead",
      body: () => ({
        transaction_id: txn(),
        amount_cents: 100,
        click_id: clickId,
        occurred_at: new Date(Date.now() + 600_000).toISOString(),
      }),
      status: 400,
      expected: bad("occurred_at must be an ISO 8601 time within the last 30 days"),
    },
    {
      name: "occurred_at without offset",
      body: () => ({ transaction_id: txn(), amount_cents: 100, occurred_at: "2026-11-20T10:00:00" }),
      status: 400,
      expected: bad("occurred_at must be an ISO 8601 time within the last 30 days"),
    },
    {
      name: "occurred_at not a date",
      body: () => ({ transaction_id: txn(), amount_cents: 100, occurred_at: "yesterday" }),
      status: 400,
      expected: bad("occurred_at must be an ISO 8601 time within the last 30 days"),
    },
    {
      name: "unknown provider",
      body: () => ({ transaction_id: txn(), amount_cents: 100, provider: "acme" }),
      status: 400,
      expected: bad(`provider must be one of: ${providers}`),
    },
    {
      name: "empty provider_payment_id",
      body: () => ({ transaction_id: txn(), amount_cents: 100, provider_payment_id: "" }),
      status: 400,
      expected: bad("provider_payment_id must be a string of 1 to 255 characters"),
    },
    {
      name: "long provider_payment_id",
      body: () => ({ transaction_id: txn(), amount_cents: 100, provider_payment_id: "x".repeat(256) }),
      status: 400,
      expected: bad("provider_payment_id must be a string of 1 to 255 characters"),
    },
    {
      name: "string livemode",
      body: () => ({ transaction_id: txn(), amount_cents: 100, livemode: "false" }),
      status: 400,
      expected: bad("livemode must be a boolean"),
    },
    {
      name: "unsupported currency",
      body: () => ({ transaction_id: txn(), amount_cents: 100, click_id: clickId, currency: "GBP" }),
      status: 422,
      expected: platform(
        422,
        "UnprocessableEntityError",
        "currency GBP is not supported",
        "unsupported_currency",
      ),
    },
    {
      name: "a currency longer than any code",
      body: () => ({
        transaction_id: txn(),
        amount_cents: 100,
        click_id: clickId,
        currency: "US DOLLARS, PLEASE",
      }),
      status: 422,
      expected: platform(
        422,
        "UnprocessableEntityError",
        "currency US DOLLARS, PLEASE is not supported",
        "unsupported_currency",
      ),
    },
    {
      name: "neither customer_key nor click_id",
      body: () => ({ transaction_id: txn(), amount_cents: 100 }),
      status: 400,
      expected: noAttribution("Customer not found. Provide customer_key or click_id."),
    },
    {
      name: "unknown click_id and customer_key",
      body: () => ({
        transaction_id: txn(),
        amount_cents: 100,
        click_id: "clk_nope",
        customer_key: "nobody",
      }),
      status: 400,
      expected: noAttribution("Customer not found. Provide customer_key or click_id."),
    },
    {
      name: "click of another program",
      body: () => ({ transaction_id: txn(), amount_cents: 100, click_id: foreignClickId }),
      status: 400,
      expected: noAttribution("No affiliate attribution found for this customer in this program"),
    },
    {
      // Spec section 7, "customer belongs to another program": here, another program of the same brand.
      name: "customer_key of a customer of another program of the same workspace",
      body: () => ({ transaction_id: txn(), amount_cents: 100, customer_key: siblingCustomerKey }),
      status: 400,
      expected: noAttribution("No affiliate attribution found for this customer in this program"),
    },
    {
      name: "the same, with a click_id that resolves nothing",
      body: () => ({
        transaction_id: txn(),
        amount_cents: 100,
        customer_key: siblingCustomerKey,
        click_id: "clk_nope",
      }),
      status: 400,
      expected: noAttribution("No affiliate attribution found for this customer in this program"),
    },
    {
      // Another brand's customer key says nothing about this one's customers (README, Attribution).
      name: "customer_key known only to another workspace's program",
      body: () => ({ transaction_id: txn(), amount_cents: 100, customer_key: foreignCustomerKey }),
      status: 400,
      expected: noAttribution("Customer not found. Provide customer_key or click_id."),
    },
    { name: "malformed JSON", body: () => "{", status: 400, expected: bad("Malformed JSON in request body") },
    {
      name: "a form's Content-Type (curl -d without -H)",
      body: () => ({ transaction_id: txn(), amount_cents: 100, click_id: clickId }),
      headers: () => ({
        Authorization: `Bearer ${p.apiKey}`,
        "Content-Type": "application/x-www-form-urlencoded",
      }),
      status: 400,
      expected: bad("Content-Type must be application/json"),
    },
  ];

  it.each(cases)("$name -> $status", async ({ body, headers, status, expected }) => {
    const response = await postJson(salePath, body(), headers?.() ?? { Authorization: `Bearer ${p.apiKey}` });
    expect(response.status).toBe(status);
    expect(response.body).toEqual(expected);
    expect(response.headers.get("X-Request-ID")).toMatch(/^req_/);
    expect(await salesOf(p.programId)).toHaveLength(0);
    expect(await commissionsOf(p.programId)).toHaveLength(0);
  });

  it("answers 409 for a transaction_id recorded anywhere in the service, naming the recorded sale's id", async () => {
    const id = txn();
    const first = await sale(other, { transaction_id: id, amount_cents: 1000, click_id: await click(other) });
    expect(first.status).toBe(200);
    const duplicate = platform(
      409,
      "ConflictError",
      "Duplicate transaction_id. This sale has already been recorded.",
      "duplicate_transaction",
      { sale_id: first.body.sale_id },
    );
    const fromAnotherProgram = await sale(p, { transaction_id: id, amount_cents: 1000, click_id: clickId });
    expect(fromAnotherProgram.status).toBe(409);
    expect(fromAnotherProgram.body).toEqual(duplicate);
    const own = await sale(other, { transaction_id: id, amount_cents: 1000, click_id: await click(other) });
    expect(own.status).toBe(409);
    expect(own.body).toEqual(duplicate);
  });

  it("refuses a partner that is no longer in the program, recording nothing", async () => {
    const q = await createProgram();
    const clicked = await click(q);
    await db
      .update(programPartners)
      .set({ status: "removed" })
      .where(eq(programPartners.partnerId, q.partnerIds[0]));
    const response = await sale(q, { transaction_id: txn(), amount_cents: 100, click_id: clicked });
    expect(response.body).toEqual(noAttribution("No partner-program relationship found for this customer"));
    expect(await salesOf(q.programId)).toHaveLength(0);
  });

  it("stores the sale but answers 400 when the customer has no partner; a resend gives 409", async () => {
    const q = await createProgram();
    const key = unique("user");
    await db
      .insert(customers)
      .values({ programId: q.programId, customerKey: key, status: "lead", partnerId: null });
    const body = { transaction_id: txn(), amount_cents: 100, customer_key: key };
    const response = await sale(q, body);
    expect(response.body).toEqual(noAttribution("partnerId required to create commission"));
    const stored = await salesOf(q.programId);
    expect(stored).toHaveLength(1);
    expect(await commissionsOf(q.programId)).toHaveLength(0);
    const resend = await sale(q, body);
    expect(resend.status).toBe(409);
    expect((resend.body.error as { details: unknown }).details).toEqual({ sale_id: stored[0]!.id });
  });

  it("answers 401 api_key_rotation_required after the key's rotation deadline", async () => {
    const q = await createProgram();
    await db
      .update(programApiKeys)
      .set({ rotationMarkedAt: new Date(Date.now() - 10 * days), rotateBy: new Date(Date.now() - 1000) })
      .where(eq(programApiKeys.programId, q.programId));
    const response = await sale(q, { transaction_id: txn(), amount_cents: 100, click_id: await click(q) });
    expect(response.status).toBe(401);
    expect(response.body).toEqual({
      error: {
        code: "api_key_rotation_required",
        message: expect.any(String),
        hint: expect.any(String),
        docs_url: expect.stringMatching(/^https:\/\//),
      },
    });
    expect(await salesOf(q.programId)).toHaveLength(0);
  });
});

describe("sale attribution and commissions", () => {
  it("attributes through click_id, creates the customer, an approved commission and credits the partner", async () => {
    const p = await createProgram({ commissionType: "percent", commissionRate: "20" });
    const clickId = await click(p);
    const response = await sale(p, { transaction_id: txn(), amount_cents: 4999, click_id: clickId });
    expect(response.status).toBe(200);
    expect(response.body).toEqual({
      success: true,
      sale_id: expect.any(Number),
      commission_id: expect.any(Number),
      message: "Sale recorded and commission created",
    });
    expect(response.headers.get("X-RateLimit-Limit")).toBe("120");
    const [commission] = await commissionsOf(p.programId);
    expect(commission).toMatchObject({
      id: response.body.commission_id,
      amountCents: 1000,
      status: "approved",
      currency: "USD",
    });
    expect(commission?.creditedAt).not.toBeNull();
    expect(await balanceOf(p.programId, p.partnerIds[0])).toBe(1000);
    expect(await ledgerOf(p.programId)).toMatchObject([
      { amountCents: 1000, cause: "commission_credit", commissionId: commission?.id },
    ]);
    expect(await customersOf(p.programId)).toMatchObject([
      { clickId, status: "converted", partnerId: p.partnerIds[0], customerKey: null },
    ]);
  });

  it("prefers customer_key, and stores every reporting field as sent", async () => {
    const p = await createProgram();
    const clickId = await click(p, p.links[1]);
    const key = unique("user");
    await db.insert(customers).values({
      programId: p.programId,
      customerKey: key,
      status: "lead",
      partnerId: p.partnerIds[1],
      clickId,
      clickedAt: new Date(),
      signedUpAt: new Date(),
    });
    const occurredAt = new Date(Date.now() - 3600_000).toISOString();
    const response = await sale(p, {
      transaction_id: txn(),
      amount_cents: 1000,
      tax_cents: 100,
      customer_key: key,
      click_id: "clk_ignored_when_key_matches",
      currency: "eur",
      sale_type: "subscription",
      line_items: { plan: "pro" },
      is_recurring: true,
      subscription_id: "sub_1",
      subscription_interval: "monthly",
      occurred_at: occurredAt,
      provider: "stripe",
      provider_payment_id: "pi_1",
      livemode: true,
    });
    expect(response.status).toBe(200);
    const [stored] = await salesOf(p.programId);
    expect(stored).toMatchObject({
      partnerId: p.partnerIds[1],
      amountCents: 1000,
      taxCents: 100,
      currency: "EUR",
      saleType: "subscription",
      lineItems: { plan: "pro" },
      isRecurring: true,
      subscriptionId: "sub_1",
      subscriptionInterval: "monthly",
      provider: "stripe",
      providerPaymentId: "pi_1",
      livemode: true,
      isTest: false,
    });
    expect(stored?.occurredAt?.toISOString()).toBe(occurredAt);
    expect((await commissionsOf(p.programId))[0]).toMatchObject({ currency: "EUR", amountCents: 200 });
    expect(await balanceOf(p.programId, p.partnerIds[1], "EUR")).toBe(200);
  });

  it("stores line_items nested 64 levels deep, the most a body may nest, as sent", async () => {
    const p = await createProgram();
    let lineItems: Record<string, unknown> = { name: "deepest" };
    for (let level = 1; level < 64; level++) lineItems = { [`level${64 - level}`]: lineItems };
    const response = await sale(p, {
      transaction_id: txn(),
      amount_cents: 1000,
      click_id: await click(p),
      line_items: lineItems,
    });
    expect(response.status).toBe(200);
    expect((await salesOf(p.programId))[0]?.lineItems).toEqual(lineItems);
  });

  it("keeps the first partner: a click id of a second partner's link resolves to the original click", async () => {
    const p = await createProgram();
    const original = await click(p, p.links[0]);
    const second = await postJson("/api/v1/track/click", {
      affiliate_url: `https://shop.example/?aff=${p.links[1]}`,
      click_id: original,
    });
    expect(second.body.click_id).toBe(original);
    const response = await sale(p, { transaction_id: txn(), amount_cents: 1000, click_id: original });
    expect(response.status).toBe(200);
    expect((await commissionsOf(p.programId))[0]?.partnerId).toBe(p.partnerIds[0]);
  });

  it("pays fixed commissions in the sale's currency minor units", async () => {
    const p = await createProgram({ commissionType: "fixed", commissionRate: "50000" });
    await sale(p, { transaction_id: txn(), amount_cents: 200000, currency: "VND", click_id: await click(p) });
    expect((await commissionsOf(p.programId))[0]).toMatchObject({ amountCents: 50000, currency: "VND" });
  });

  it("pays a one-time commission once per customer; later sales are recorded without one", async () => {
    const p = await createProgram({ commissionType: "percent", commissionRate: "10" });
    const clickId = await click(p);
    await sale(p, { transaction_id: txn(), amount_cents: 1000, click_id: clickId });
    const second = await sale(p, { transaction_id: txn(), amount_cents: 1000, click_id: clickId });
    expect(second.status).toBe(200);
    expect(second.body).toMatchObject({ sale_id: expect.any(Number), commission_id: null });
    expect(second.body.message).toContain("one-time commission");
    expect(await salesOf(p.programId)).toHaveLength(2);
    expect(await commissionsOf(p.programId)).toHaveLength(1);
  });

  it("leaves a returning customer's row unwritten: a later sale, commissioned or not, neither rewrites nor locks it", async () => {
    const rowVersion = async (programId: number) => {
      // xmin: the transaction that wrote the row's version; xmax: one that locked or replaced it (0: none).
      const { rows } = await db.execute<{ version: string; locked_by: string; status: string }>(
        sql`select xmin::text as version, xmax::text as locked_by, status from customers where program_id = ${programId}`,
      );
      expect(rows).toHaveLength(1);
      return rows[0];
    };
    for (const commissionType of ["percent", "recurring_percent"] as const) {
      const p = await createProgram({ commissionType, commissionRate: "10" });
      const clickId = await click(p);
      await sale(p, { transaction_id: txn(), amount_cents: 1000, click_id: clickId });
      const converted = await rowVersion(p.programId);
      expect(converted).toMatchObject({ status: "converted", locked_by: "0" });
      const later = await sale(p, { transaction_id: txn(), amount_cents: 1000, click_id: clickId });
      expect(later.status).toBe(200);
      expect(later.body.commission_id === null).toBe(commissionType === "percent");
      expect(await rowVersion(p.programId)).toEqual(converted);
      expect(await salesOf(p.programId)).toHaveLength(2);
    }
  });

  it("pays recurring commissions until duration_months after the first commission", async () => {
    const p = await createProgram({ commissionType: "recurring_percent", commissionRate: "10" });
    await db.execute(sql`update programs set duration_months = 2 where id = ${p.programId}`);
    const clickId = await click(p);
    const first = await sale(p, { transaction_id: txn(), amount_cents: 1000, click_id: clickId });
    const renewal = await sale(p, { transaction_id: txn(), amount_cents: 1000, click_id: clickId });
    expect(first.body.commission_id).not.toBeNull();
    expect(renewal.body.commission_id).not.toBeNull();
    await db.execute(
      sql`update customers set first_commission_at = now() - interval '2 months 1 day' where program_id = ${p.programId}`,
    );
    const late = await sale(p, { transaction_id: txn(), amount_cents: 1000, click_id: clickId });
    expect(late.body).toMatchObject({ commission_id: null });
    expect(late.body.message).toContain("recurring commission period");
    expect(await balanceOf(p.programId, p.partnerIds[0])).toBe(200);
  });

  it("applies a per-product rule by product_id", async () => {
    const p = await createProgram({ commissionType: "percent", commissionRate: "10" });
    await db.execute(sql`insert into commission_rules (program_id, product_id, commission_type, commission_rate)
                         values (${p.programId}, 'enterprise', 'fixed', '99')`);
    const clickId = await click(p);
    await sale(p, { transaction_id: txn(), amount_cents: 1000, click_id: clickId, product_id: "enterprise" });
    expect((await commissionsOf(p.programId))[0]?.amountCents).toBe(9900);
  });

  it("holds the commission as pending during the hold period, without crediting the partner", async () => {
    const p = await createProgram({ holdDays: 30 });
    const before = Date.now();
    await sale(p, { transaction_id: txn(), amount_cents: 1000, click_id: await click(p) });
    const [commission] = await commissionsOf(p.programId);
    expect(commission?.status).toBe("pending");
    expect(commission?.creditedAt).toBeNull();
    const holdUntil = commission?.holdUntil?.getTime() ?? 0;
    expect(holdUntil).toBeGreaterThanOrEqual(before + 30 * 86_400_000 - 1000);
    expect(holdUntil).toBeLessThanOrEqual(Date.now() + 30 * 86_400_000);
    expect(await balanceOf(p.programId, p.partnerIds[0])).toBe(0);
    expect(await ledgerOf(p.programId)).toHaveLength(0);
  });
});

describe("attribution window", () => {
  it("records nothing and answers null ids when the click is older than the window", async () => {
    const p = await createProgram({ attributionWindowDays: 30 });
    const clickId = await click(p);
    await ageClick(clickId, 31);
    const response = await sale(p, { transaction_id: txn(), amount_cents: 1000, click_id: clickId });
    expect(response.status).toBe(200);
    expect(response.body).toEqual({
      success: true,
      sale_id: null,
      commission_id: null,
      message: expect.any(String),
    });
    expect(await salesOf(p.programId)).toHaveLength(0);
    expect(await customersOf(p.programId)).toHaveLength(0);
  });

  it("measures the window to the signup when one was recorded", async () => {
    const p = await createProgram({ attributionWindowDays: 30 });
    const clickId = await click(p);
    await ageClick(clickId, 40);
    const key = unique("user");
    await db.insert(customers).values({
      programId: p.programId,
      partnerId: p.partnerIds[0],
      clickId,
      clickedAt: new Date(Date.now() - 40 * 86_400_000),
      signedUpAt: new Date(Date.now() - 15 * 86_400_000),
      customerKey: key,
      status: "lead",
    });
    const response = await sale(p, { transaction_id: txn(), amount_cents: 1000, customer_key: key });
    expect(response.body.sale_id).not.toBeNull();
  });

  it("does not re-check the window once a conversion is recorded", async () => {
    const p = await createProgram({ attributionWindowDays: 30, commissionType: "recurring_percent" });
    const clickId = await click(p);
    expect(
      (await sale(p, { transaction_id: txn(), amount_cents: 1000, click_id: clickId })).body.sale_id,
    ).not.toBeNull();
    await ageClick(clickId, 90);
    await db.execute(
      sql`update customers set clicked_at = now() - interval '90 days' where click_id = ${clickId}`,
    );
    const renewal = await sale(p, { transaction_id: txn(), amount_cents: 1000, click_id: clickId });
    expect(renewal.body.sale_id).not.toBeNull();
    expect(renewal.body.commission_id).not.toBeNull();
  });
});

describe("test sales", () => {
  it.each([
    { name: "test API key", key: (p: ProgramFixture) => p.testApiKey, extra: {} },
    { name: "livemode false", key: (p: ProgramFixture) => p.apiKey, extra: { livemode: false } },
    {
      name: "additional_data.test_mode",
      key: (p: ProgramFixture) => p.apiKey,
      extra: { additional_data: { test_mode: true } },
    },
  ])("$name records a flagged sale with no commission", async ({ key, extra }) => {
    const p = await createProgram();
    const response = await sale(
      p,
      { transaction_id: txn(), amount_cents: 1000, click_id: await click(p), ...extra },
      key(p),
    );
    expect(response.status).toBe(200);
    expect(response.body).toEqual({
      success: true,
      message: "Test sale recorded",
      data: { eventId: expect.any(Number), programId: p.programId, test_mode: true },
    });
    const [stored] = await salesOf(p.programId);
    expect(stored).toMatchObject({ id: (response.body.data as { eventId: number }).eventId, isTest: true });
    expect(await commissionsOf(p.programId)).toHaveLength(0);
    expect(await customersOf(p.programId)).toHaveLength(0);
  });

  it("generates test_txn_<timestamp> when transaction_id is omitted, and needs no amount", async () => {
    const p = await createProgram();
    const [a, b] = await Promise.all([sale(p, {}, p.testApiKey), sale(p, {}, p.testApiKey)]);
    expect(a.status).toBe(200);
    expect(b.status).toBe(200);
    const stored = await salesOf(p.programId);
    expect(stored).toHaveLength(2);
    for (const row of stored) expect(row.processorEventId).toMatch(/^test_txn_\d{13}$/);
  });

  it("treats a null transaction_id and amount_cents as omitted", async () => {
    const p = await createProgram();
    const response = await sale(p, { transaction_id: null, amount_cents: null }, p.testApiKey);
    expect(response.status).toBe(200);
    const [stored] = await salesOf(p.programId);
    expect(stored?.processorEventId).toMatch(/^test_txn_\d{13}$/);
  });

  it("records a null, empty or blank currency as the default, USD", async () => {
    const p = await createProgram();
    for (const currency of [null, "", "  "]) {
      const response = await sale(p, { transaction_id: txn(), amount_cents: 500, currency }, p.testApiKey);
      expect(response.status).toBe(200);
    }
    const stored = await salesOf(p.programId);
    expect(stored.map((row) => row.currency)).toEqual(["USD", "USD", "USD"]);
  });

  it("still requires the API key", async () => {
    const response = await postJson(salePath, { additional_data: { test_mode: true } });
    expect(response.status).toBe(401);
  });
});

describe("key rotation notice", () => {
  it("adds Deprecation, Sunset, Link and a warnings array before the deadline", async () => {
    const p = await createProgram();
    const markedAt = new Date(Math.floor(Date.now() / 1000) * 1000 - 86_400_000);
    const rotateBy = new Date(Math.floor(Date.now() / 1000) * 1000 + 7 * 86_400_000);
    await db
      .update(programApiKeys)
      .set({ rotationMarkedAt: markedAt, rotateBy })
      .where(eq(programApiKeys.programId, p.programId));
    const response = await sale(p, { transaction_id: txn(), amount_cents: 1000, click_id: await click(p) });
    expect(response.status).toBe(200);
    expect(response.headers.get("Deprecation")).toBe(`@${markedAt.getTime() / 1000}`);
    expect(response.headers.get("Sunset")).toBe(rotateBy.toUTCString());
    expect(response.headers.get("Link")).toMatch(/^<https:\/\/.+>; rel="deprecation"$/);
    expect(response.body).toMatchObject({
      success: true,
      sale_id: expect.any(Number),
      commission_id: expect.any(Number),
    });
    expect(response.body.warnings).toEqual([
      {
        code: "api_key_rotation_required",
        message: expect.any(String),
        hint: expect.any(String),
        rotate_by: rotateBy.toISOString(),
        docs_url: expect.stringMatching(/^https:\/\//),
      },
    ]);
  });

  it("keeps a disabled link's clicks attributable: links matter at click time only", async () => {
    const p = await createProgram();
    const clickId = await click(p);
    await db.update(referralLinks).set({ isActive: false }).where(eq(referralLinks.shortLink, p.links[0]));
    expect((await sale(p, { transaction_id: txn(), amount_cents: 100, click_id: clickId })).status).toBe(200);
  });
});
