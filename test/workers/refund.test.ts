import { sql } from "drizzle-orm";
import { beforeAll, describe, expect, it } from "vitest";
import { sha256Hex } from "../../lib/auth/api-keys.ts";
import type { RefundRepeat } from "../../lib/refunds/decide-refund.ts";
import { readRefundFacts } from "../../lib/refunds/refund-store.ts";
import { withdrawals } from "../../schema/index.ts";
import { createProgram, db, type ProgramFixture, postJson } from "./harness.ts";
import {
  addKey,
  commissionRow,
  expectBalanceMatchesLedger,
  expectNotification,
  ledgerOfPartner,
  markPaidOut,
  notificationByDedupeKey,
  refund,
  refundPath,
  refundsOfSale,
  saleRow,
  trackedSale,
  withdrawalsOf,
} from "./refund-harness.ts";
import { balanceOf, click, sale, txn } from "./sale-harness.ts";

const platform = (status: number, name: string, message: string, code: string) => ({
  data: null,
  error: { status, name, message, details: {}, code },
});
const bad = (message: string) => platform(400, "BadRequestError", message, "invalid_request");
const unauthorized = (message: string) => platform(401, "UnauthorizedError", message, "unauthorized");
const saleNotFound = platform(404, "NotFoundError", "Sale not found for transaction_id", "not_found");
const docsUrl = "https://docs.affiliate-tracking.dev/api-keys#rotation";
const day = 86_400_000;

describe("POST /api/v1/track/refund errors (nothing refunded)", () => {
  let p: ProgramFixture;
  let other: ProgramFixture;
  let ownSale: { transactionId: string; saleId: number; commissionId: number | null };
  let foreignTransactionId: string;
  let retiredKey: string;
  beforeAll(async () => {
    [p, other] = await Promise.all([createProgram(), createProgram()]);
    ownSale = await trackedSale(p, 10_000);
    foreignTransactionId = (await trackedSale(other, 10_000)).transactionId;
    retiredKey = await addKey(p.programId, {
      markedAt: new Date(Date.now() - 10 * day),
      rotateBy: new Date(Date.now() - 60_000),
    });
  });

  const cases: Array<{
    name: string;
    body: () => unknown;
    headers?: () => Record<string, string>;
    status: number;
    expected: () => unknown;
  }> = [
    {
      name: "no Authorization header",
      body: () => ({ transaction_id: ownSale.transactionId }),
      headers: () => ({}),
      status: 401,
      expected: () => unauthorized("Missing or malformed Authorization header. Expected: Bearer <token>"),
    },
    {
      name: "Basic credentials",
      body: () => ({ transaction_id: ownSale.transactionId }),
      headers: () => ({ Authorization: "Basic dXNlcjpwYXNz" }),
      status: 401,
      expected: () => unauthorized("Missing or malformed Authorization header. Expected: Bearer <token>"),
    },
    {
      name: "Bearer without a token",
      body: () => ({ transaction_id: ownSale.transactionId }),
      headers: () => ({ Authorization: "Bearer" }),
      status: 401,
      expected: () => unauthorized("Empty Bearer token"),
    },
    {
      name: "Bearer with blanks only",
      body: () => ({ transaction_id: ownSale.transactionId }),
      headers: () => ({ Authorization: "Bearer    " }),
      status: 401,
      expected: () => unauthorized("Empty Bearer token"),
    },
    {
      name: "unknown token",
      body: () => ({ transaction_id: ownSale.transactionId }),
      headers: () => ({ Authorization: "Bearer sk_live_nope" }),
      status: 401,
      expected: () => unauthorized("Invalid API token"),
    },
    {
      name: "unknown token with an invalid body",
      body: () => "{not json",
      headers: () => ({ Authorization: "Bearer sk_live_nope" }),
      status: 401,
      expected: () => unauthorized("Invalid API token"),
    },
    {
      name: "key past its rotation deadline",
      body: () => ({ transaction_id: ownSale.transactionId }),
      headers: () => ({ Authorization: `Bearer ${retiredKey}` }),
      status: 401,
      expected: () => ({
        error: {
          code: "api_key_rotation_required",
          message: "This API key was retired after its rotation deadline.",
          hint: "Generate a new API key in the program settings and use it instead.",
          docs_url: docsUrl,
        },
      }),
    },
    {
      name: "missing transaction_id",
      body: () => ({ refund_amount_cents: 100 }),
      status: 400,
      expected: () => bad("transaction_id is required"),
    },
    {
      name: "numeric transaction_id",
      body: () => ({ transaction_id: 12345 }),
      status: 400,
      expected: () => bad("transaction_id is required"),
    },
    {
      name: "null transaction_id",
      body: () => ({ transaction_id: null }),
      status: 400,
      expected: () => bad("transaction_id is required"),
    },
    {
      name: "empty transaction_id",
      body: () => ({ transaction_id: "" }),
      status: 400,
      expected: () => bad("transaction_id is required"),
    },
    {
      name: "blank transaction_id",
      body: () => ({ transaction_id: "   " }),
      status: 400,
      expected: () => bad("transaction_id is required"),
    },
    {
      name: "body is an array",
      body: () => [{ transaction_id: ownSale.transactionId }],
      status: 400,
      expected: () => bad("transaction_id is required"),
    },
    {
      name: "body is JSON null",
      body: () => "null",
      status: 400,
      expected: () => bad("transaction_id is required"),
    },
    {
      name: "unknown reason",
      body: () => ({ transaction_id: ownSale.transactionId, reason: "fraud" }),
      status: 400,
      expected: () => bad("reason must be refund or chargeback"),
    },
    {
      name: "reason in another case",
      body: () => ({ transaction_id: ownSale.transactionId, reason: "Chargeback" }),
      status: 400,
      expected: () => bad("reason must be refund or chargeback"),
    },
    {
      name: "negative refund_amount_cents",
      body: () => ({ transaction_id: ownSale.transactionId, refund_amount_cents: -100 }),
      status: 400,
      expected: () => bad("refund_amount_cents must be a positive integer"),
    },
    {
      name: "fractional refund_amount_cents",
      body: () => ({ transaction_id: ownSale.transactionId, refund_amount_cents: 10.5 }),
      status: 400,
      expected: () => bad("refund_amount_cents must be a positive integer"),
    },
    {
      name: "string refund_amount_cents",
      body: () => ({ transaction_id: ownSale.transactionId, refund_amount_cents: "100" }),
      status: 400,
      expected: () => bad("refund_amount_cents must be a positive integer"),
    },
    {
      name: "numeric refund_id",
      body: () => ({ transaction_id: ownSale.transactionId, refund_amount_cents: 100, refund_id: 7 }),
      status: 400,
      expected: () => bad("refund_id must be a string"),
    },
    {
      name: "malformed JSON",
      body: () => "{not json",
      status: 400,
      expected: () => bad("Malformed JSON in request body"),
    },
    {
      name: "additional_data not an object",
      body: () => ({ transaction_id: ownSale.transactionId, additional_data: "test" }),
      status: 400,
      expected: () => bad("additional_data must be an object"),
    },
    {
      name: "string additional_data.test_mode",
      body: () => ({ transaction_id: ownSale.transactionId, additional_data: { test_mode: "true" } }),
      status: 400,
      expected: () => bad("additional_data.test_mode must be a boolean"),
    },
    {
      name: "test mode with an invalid body",
      body: () => ({
        transaction_id: ownSale.transactionId,
        reason: "fraud",
        additional_data: { test_mode: true },
      }),
      status: 400,
      expected: () => bad("reason must be refund or chargeback"),
    },
    {
      name: "unknown transaction_id",
      body: () => ({ transaction_id: txn(), refund_amount_cents: 100 }),
      status: 404,
      expected: () => saleNotFound,
    },
    {
      name: "a sale of another program",
      body: () => ({ transaction_id: foreignTransactionId }),
      status: 404,
      expected: () => saleNotFound,
    },
  ];

  for (const c of cases) {
    it(`${c.status}: ${c.name}`, async () => {
      const headers = c.headers?.() ?? { Authorization: `Bearer ${p.apiKey}` };
      const response = await postJson(refundPath, c.body(), headers);
      expect(response.status).toBe(c.status);
      expect(response.body).toEqual(c.expected());
      expect(response.headers.get("X-Request-ID")).toMatch(/^req_/);
    });
  }

  it("left every sale untouched", async () => {
    // Runs after the table: none of the refusals refunded anything, here or in the other program.
    expect((await saleRow(ownSale.saleId)).refundedCents).toBe(0);
    expect(await refundsOfSale(ownSale.saleId)).toEqual([]);
    expect(await commissionRow(ownSale.commissionId!)).toMatchObject({
      status: "approved",
      deductedCents: 0,
    });
  });
});

describe("test API key", () => {
  it("answers {success, test} before the body is checked or the sale looked up; nothing is refunded", async () => {
    const p = await createProgram();
    const s = await trackedSale(p, 10_000);
    for (const body of [
      "{not json",
      {},
      { transaction_id: 5, reason: "fraud", refund_amount_cents: -1 },
      { transaction_id: txn() },
      { transaction_id: s.transactionId },
    ]) {
      const response = await refund(p, body, p.testApiKey);
      expect(response.status).toBe(200);
      expect(response.body).toEqual({ success: true, test: true });
    }
    expect((await saleRow(s.saleId)).refundedCents).toBe(0);
    expect(await refundsOfSale(s.saleId)).toEqual([]);
    expect(await commissionRow(s.commissionId!)).toMatchObject({ status: "approved", deductedCents: 0 });
  });
});

describe("test mode (additional_data.test_mode)", () => {
  it("answers {success, test} once the body is valid and refunds nothing; test_mode false refunds", async () => {
    const p = await createProgram();
    const s = await trackedSale(p, 10_000);
    for (const body of [
      { transaction_id: s.transactionId, additional_data: { test_mode: true } },
      { transaction_id: s.transactionId, refund_amount_cents: 500, additional_data: { test_mode: true } },
      { transaction_id: txn(), refund_id: "r-1", additional_data: { test_mode: true, note: "kept" } },
    ]) {
      const response = await refund(p, body);
      expect(response.status).toBe(200);
      expect(response.body).toEqual({ success: true, test: true });
    }
    expect((await saleRow(s.saleId)).refundedCents).toBe(0);
    expect(await refundsOfSale(s.saleId)).toEqual([]);
    expect(await commissionRow(s.commissionId!)).toMatchObject({ status: "approved", deductedCents: 0 });

    const live = await refund(p, { transaction_id: s.transactionId, additional_data: { test_mode: false } });
    expect(live.status).toBe(200);
    expect(live.body).toMatchObject({ success: true, status: "reversed" });
    expect((await saleRow(s.saleId)).refundedCents).toBe(10_000);
  });
});

describe("rate limit shared with sale", () => {
  it("sale and refund with one key draw from one bucket of 120 per minute", async () => {
    for (let attempt = 0; attempt < 3; attempt++) {
      const p = await createProgram();
      const clickId = await click(p);
      // The key's first request (404: no such sale) counts in its bucket like every later one.
      const responses = [await refund(p, { transaction_id: txn() })];
      for (let i = 0; i < 3; i++) {
        const transactionId = txn();
        responses.push(
          await sale(p, { transaction_id: transactionId, amount_cents: 1000, click_id: clickId }),
        );
        responses.push(await refund(p, { transaction_id: transactionId, refund_amount_cents: 100 }));
      }
      responses.push(await refund(p, { transaction_id: txn() })); // a 404 counts as well
      if (new Set(responses.map((r) => r.headers.get("X-RateLimit-Reset"))).size !== 1) continue;
      expect(responses.map((r) => r.status)).toEqual([404, 200, 200, 200, 200, 200, 200, 404]);
      responses.forEach((response, index) => {
        expect(response.headers.get("X-RateLimit-Limit")).toBe("120");
        expect(response.headers.get("X-RateLimit-Remaining")).toBe(String(119 - index));
      });
      return;
    }
    throw new Error("the rate-limit window rolled over in three attempts in a row");
  });
});

describe("key rotation notice on refund", () => {
  it("adds Deprecation, Sunset, Link and warnings on success and on errors while the key still works", async () => {
    const p = await createProgram();
    const markedAt = new Date("2026-01-15T10:00:00.000Z");
    const rotateBy = new Date(Date.now() + 7 * day);
    rotateBy.setUTCMilliseconds(0);
    const key = await addKey(p.programId, { markedAt, rotateBy });
    const s = await trackedSale(p, 10_000);
    const warning = {
      code: "api_key_rotation_required",
      message: `This API key must be rotated by ${rotateBy.toISOString()}; after that it stops working.`,
      hint: "Generate a new API key in the program settings, deploy it, then stop using this one.",
      rotate_by: rotateBy.toISOString(),
      docs_url: docsUrl,
    };
    const expectHeaders = (headers: Headers) => {
      expect(headers.get("Deprecation")).toBe(`@${Math.floor(markedAt.getTime() / 1000)}`);
      expect(headers.get("Sunset")).toBe(rotateBy.toUTCString());
      expect(headers.get("Link")).toBe(`<${docsUrl}>; rel="deprecation"`);
      expect(headers.get("X-RateLimit-Limit")).toBe("120");
    };

    const applied = await refund(p, { transaction_id: s.transactionId, refund_amount_cents: 2500 }, key);
    expect(applied.status).toBe(200);
    expectHeaders(applied.headers);
    expect(applied.body).toEqual({
      success: true,
      status: "refunded",
      deductionAmount: 500,
      commission_id: s.commissionId,
      warnings: [warning],
    });

    const missing = await refund(p, { transaction_id: txn() }, key);
    expect(missing.status).toBe(404);
    expectHeaders(missing.headers);
    expect(missing.body).toEqual({ ...saleNotFound, warnings: [warning] });

    const invalid = await refund(p, { transaction_id: s.transactionId, reason: "other" }, key);
    expect(invalid.status).toBe(400);
    expectHeaders(invalid.headers);
    expect(invalid.body).toEqual({ ...bad("reason must be refund or chargeback"), warnings: [warning] });
  });

  it("adds nothing for a key not marked for rotation", async () => {
    const p = await createProgram();
    const s = await trackedSale(p, 10_000);
    const response = await refund(p, { transaction_id: s.transactionId, refund_amount_cents: 100 });
    expect(response.status).toBe(200);
    expect(response.headers.get("Deprecation")).toBeNull();
    expect(response.headers.get("Sunset")).toBeNull();
    expect(response.body.warnings).toBeUndefined();
  });
});

describe("commission state table through HTTP", () => {
  it("approved + partial refund -> refunded, proportional share taken from the balance with a ledger row", async () => {
    const p = await createProgram({ commissionType: "percent", commissionRate: "20" });
    const s = await trackedSale(p, 10_000);
    const partner = p.partnerIds[0];
    expect(await balanceOf(p.programId, partner)).toBe(2000);

    const response = await refund(p, {
      transaction_id: s.transactionId,
      refund_amount_cents: 3000,
      refund_id: "re_1",
      refund_reason: "Customer changed their mind",
    });
    expect(response.status).toBe(200);
    expect(response.body).toEqual({
      success: true,
      status: "refunded",
      deductionAmount: 600,
      commission_id: s.commissionId,
    });
    expect(await commissionRow(s.commissionId!)).toMatchObject({
      status: "refunded",
      amountCents: 2000,
      deductedCents: 600,
      refundReason: "Customer changed their mind",
      needsManualReview: false,
    });
    expect((await saleRow(s.saleId)).refundedCents).toBe(3000);
    const [row] = await refundsOfSale(s.saleId);
    expect(await refundsOfSale(s.saleId)).toHaveLength(1);
    expect(row).toMatchObject({
      commissionId: s.commissionId,
      idempotencyKey: "id:re_1",
      refundId: "re_1",
      requestedCents: 3000,
      amountCents: 3000,
      refundedTotalCents: 3000,
      deductionCents: 600,
      reason: "refund",
      refundReason: "Customer changed their mind",
    });
    expect(await balanceOf(p.programId, partner)).toBe(1400);
    const ledger = await ledgerOfPartner(p.programId, partner);
    expect(ledger.map((l) => [l.cause, l.amountCents, l.commissionId, l.refundId])).toEqual([
      ["commission_credit", 2000, s.commissionId, null],
      ["refund_deduction", -600, s.commissionId, row!.id],
    ]);
    await expectBalanceMatchesLedger(p.programId, partner);

    // The partner is told in the refund's own transaction: the notification is there with the answer.
    const note = await expectNotification(`refund:${row!.id}:partner`);
    expect(note).toMatchObject({
      recipientType: "partner",
      recipientId: partner,
      programId: p.programId,
      kind: "commission_refunded",
      payload: {
        commission_id: s.commissionId,
        status: "refunded",
        deduction_cents: 600,
        currency: "USD",
        reason: "Customer changed their mind",
      },
    });
    expect(await notificationByDedupeKey(`refund:${row!.id}:advertiser`)).toBeUndefined();
  });

  it("writes the notification with the refund or not at all: a notification the database refuses fails the refund", async () => {
    const p = await createProgram({ commissionType: "percent", commissionRate: "20" });
    const s = await trackedSale(p, 10_000);
    const partner = p.partnerIds[0]!;
    // The notification's insert fails for this program only (a trigger that raises), as a broken table would.
    const fn = `fail_notifications_${p.programId}`;
    await db.execute(
      sql.raw(`create function ${fn}() returns trigger language plpgsql as $$ begin
                 if new.program_id = ${p.programId} then raise exception 'notifications broken'; end if;
                 return new; end $$`),
    );
    await db.execute(
      sql.raw(`create trigger ${fn} before insert on notifications for each row execute function ${fn}()`),
    );
    const body = { transaction_id: s.transactionId, refund_amount_cents: 2500, refund_id: "re_atomic" };
    try {
      const failed = await refund(p, body);
      expect(failed.status).toBe(500);
      expect(failed.body).toEqual({
        data: null,
        error: {
          status: 500,
          name: "InternalServerError",
          message: "Refund tracking failed",
          details: {},
          code: "internal_error",
        },
      });
      expect(await refundsOfSale(s.saleId)).toEqual([]);
      expect((await saleRow(s.saleId)).refundedCents).toBe(0);
      expect(await commissionRow(s.commissionId!)).toMatchObject({ status: "approved", deductedCents: 0 });
      expect(await balanceOf(p.programId, partner)).toBe(2000);
    } finally {
      await db.execute(sql.raw(`drop trigger ${fn} on notifications`));
      await db.execute(sql.raw(`drop function ${fn}()`));
    }

    // The spec: a 500 can be retried with the same refund_id.
    const retried = await refund(p, body);
    expect(retried.body).toMatchObject({ success: true, status: "refunded", deductionAmount: 500 });
    const [row] = await refundsOfSale(s.saleId);
    expect(await expectNotification(`refund:${row!.id}:partner`)).toMatchObject({
      kind: "commission_refunded",
      payload: { deduction_cents: 500 },
    });
    expect(await balanceOf(p.programId, partner)).toBe(1500);
    await expectBalanceMatchesLedger(p.programId, partner);
  });

  it("rounds each total half up from the cumulative refunded amount, so partial refunds never drift", async () => {
    const p = await createProgram({ commissionType: "percent", commissionRate: "25" });
    const s = await trackedSale(p, 400); // commission 100
    const steps: Array<[number, number, number]> = [
      // [refund, deduction of this call, total deducted]
      [2, 1, 1], // 0.5 -> 1
      [3, 0, 1], // 1.25 -> 1
      [1, 1, 2], // 1.5 -> 2
      [5, 1, 3], // 2.75 -> 3
    ];
    for (const [index, [amount, deduction, total]] of steps.entries()) {
      const response = await refund(p, {
        transaction_id: s.transactionId,
        refund_amount_cents: amount,
        refund_id: `r${index}`,
      });
      expect(response.body).toEqual({
        success: true,
        status: "refunded",
        deductionAmount: deduction,
        commission_id: s.commissionId,
      });
      expect((await commissionRow(s.commissionId!)).deductedCents).toBe(total);
    }
    expect(await balanceOf(p.programId, p.partnerIds[0])).toBe(97);
    await expectBalanceMatchesLedger(p.programId, p.partnerIds[0]);
  });

  it("pending + partial refund -> refunded, commission cancelled whole, no balance change", async () => {
    const p = await createProgram({ commissionType: "percent", commissionRate: "20", holdDays: 30 });
    const s = await trackedSale(p, 10_000);
    expect(await commissionRow(s.commissionId!)).toMatchObject({ status: "pending", creditedAt: null });
    const response = await refund(p, {
      transaction_id: s.transactionId,
      refund_amount_cents: 3000,
      refund_id: "re_p",
    });
    expect(response.body).toEqual({
      success: true,
      status: "refunded",
      deductionAmount: 600, // informational: the proportional share; nothing was credited
      commission_id: s.commissionId,
    });
    expect(await commissionRow(s.commissionId!)).toMatchObject({
      status: "refunded",
      deductedCents: 2000,
      refundReason: "refund",
      creditedAt: null,
    });
    expect((await saleRow(s.saleId)).refundedCents).toBe(3000);
    expect(await refundsOfSale(s.saleId)).toMatchObject([{ amountCents: 3000, deductionCents: 0 }]);
    expect(await balanceOf(p.programId, p.partnerIds[0])).toBe(0);
    expect(await ledgerOfPartner(p.programId, p.partnerIds[0])).toEqual([]);
  });

  it("pending, then later refunds of the cancelled commission: each reports its own share, none is taken", async () => {
    const p = await createProgram({ commissionType: "percent", commissionRate: "20", holdDays: 30 });
    const s = await trackedSale(p, 10_000); // commission 2000, pending
    const steps: Array<[Record<string, unknown>, string, number]> = [
      // [body, status, deductionAmount: this refund's share of the commission, for information]
      [{ refund_amount_cents: 3000, refund_id: "a" }, "refunded", 600],
      [{ refund_amount_cents: 2000, refund_id: "b" }, "refunded", 400],
      [{}, "reversed", 1000],
    ];
    for (const [body, status, deductionAmount] of steps) {
      const response = await refund(p, { transaction_id: s.transactionId, ...body });
      expect(response.body).toEqual({
        success: true,
        status,
        deductionAmount,
        commission_id: s.commissionId,
      });
    }
    expect(await commissionRow(s.commissionId!)).toMatchObject({
      status: "reversed",
      deductedCents: 2000,
      creditedAt: null,
    });
    expect((await refundsOfSale(s.saleId)).map((row) => row.deductionCents)).toEqual([0, 0, 0]);
    expect(await balanceOf(p.programId, p.partnerIds[0])).toBe(0);
    expect(await ledgerOfPartner(p.programId, p.partnerIds[0])).toEqual([]);
  });

  const fullRefunds: Array<{ name: string; extra: Record<string, unknown> }> = [
    { name: "amount omitted", extra: {} },
    { name: "amount 0 (refund_id ignored)", extra: { refund_amount_cents: 0, refund_id: "ignored" } },
    { name: "amount null", extra: { refund_amount_cents: null } },
    { name: "amount larger than the sale", extra: { refund_amount_cents: 50_000, refund_id: "big" } },
  ];
  for (const { name, extra } of fullRefunds) {
    it(`approved + full refund (${name}) -> reversed, all of it deducted`, async () => {
      const p = await createProgram({ commissionType: "percent", commissionRate: "20" });
      const s = await trackedSale(p, 10_000);
      const response = await refund(p, { transaction_id: s.transactionId, ...extra });
      expect(response.body).toEqual({
        success: true,
        status: "reversed",
        deductionAmount: 2000,
        commission_id: s.commissionId,
      });
      expect(await commissionRow(s.commissionId!)).toMatchObject({ status: "reversed", deductedCents: 2000 });
      expect((await saleRow(s.saleId)).refundedCents).toBe(10_000);
      const rows = await refundsOfSale(s.saleId);
      expect(rows).toHaveLength(1);
      expect(rows[0]).toMatchObject({
        amountCents: 10_000,
        refundedTotalCents: 10_000,
        deductionCents: 2000,
      });
      if (extra.refund_id === "big") {
        expect(rows[0]).toMatchObject({ idempotencyKey: "id:big", refundId: "big", requestedCents: 50_000 });
      } else {
        expect(rows[0]).toMatchObject({ idempotencyKey: "full", refundId: null, requestedCents: null });
      }
      expect(await balanceOf(p.programId, p.partnerIds[0])).toBe(0);
      await expectBalanceMatchesLedger(p.programId, p.partnerIds[0]);
    });

    it(`pending + full refund (${name}) -> reversed, nothing taken from the balance`, async () => {
      const p = await createProgram({ commissionType: "percent", commissionRate: "20", holdDays: 14 });
      const s = await trackedSale(p, 10_000);
      const response = await refund(p, { transaction_id: s.transactionId, ...extra });
      expect(response.body).toEqual({
        success: true,
        status: "reversed",
        deductionAmount: 2000,
        commission_id: s.commissionId,
      });
      expect(await commissionRow(s.commissionId!)).toMatchObject({
        status: "reversed",
        deductedCents: 2000,
        creditedAt: null,
      });
      expect(await refundsOfSale(s.saleId)).toMatchObject([{ amountCents: 10_000, deductionCents: 0 }]);
      expect(await balanceOf(p.programId, p.partnerIds[0])).toBe(0);
      expect(await ledgerOfPartner(p.programId, p.partnerIds[0])).toEqual([]);
    });
  }

  it("refunded -> refunded (30 then 20 on a 100 sale: 50% in total) -> reversed with the remaining share", async () => {
    const p = await createProgram({ commissionType: "fixed", commissionRate: "10" }); // 1000 cents
    const s = await trackedSale(p, 100);
    const partner = p.partnerIds[0];
    const first = await refund(p, { transaction_id: s.transactionId, refund_amount_cents: 30 });
    expect(first.body).toEqual({
      success: true,
      status: "refunded",
      deductionAmount: 300,
      commission_id: s.commissionId,
    });
    const second = await refund(p, { transaction_id: s.transactionId, refund_amount_cents: 20 });
    expect(second.body).toEqual({
      success: true,
      status: "refunded",
      deductionAmount: 200,
      commission_id: s.commissionId,
    });
    expect(await commissionRow(s.commissionId!)).toMatchObject({ status: "refunded", deductedCents: 500 });
    expect(await balanceOf(p.programId, partner)).toBe(500);

    const last = await refund(p, { transaction_id: s.transactionId, refund_reason: "closing the order" });
    expect(last.body).toEqual({
      success: true,
      status: "reversed",
      deductionAmount: 500,
      commission_id: s.commissionId,
    });
    expect(await commissionRow(s.commissionId!)).toMatchObject({
      status: "reversed",
      deductedCents: 1000,
      refundReason: "closing the order",
    });
    expect((await saleRow(s.saleId)).refundedCents).toBe(100);
    expect(
      (await refundsOfSale(s.saleId)).map((r) => [r.idempotencyKey, r.amountCents, r.deductionCents]),
    ).toEqual([
      ["amount:30", 30, 300],
      ["amount:20", 20, 200],
      ["full", 50, 500],
    ]);
    expect(await balanceOf(p.programId, partner)).toBe(0);
    await expectBalanceMatchesLedger(p.programId, partner);
  });

  it("refunded -> reversed when a partial amount reaches the sale amount (capped at what is left)", async () => {
    const p = await createProgram({ commissionType: "percent", commissionRate: "10" });
    const s = await trackedSale(p, 999); // commission 100 (99.9 rounded half up)
    await refund(p, { transaction_id: s.transactionId, refund_amount_cents: 333, refund_id: "a" });
    expect((await commissionRow(s.commissionId!)).deductedCents).toBe(33);
    const response = await refund(p, {
      transaction_id: s.transactionId,
      refund_amount_cents: 1000,
      refund_id: "b",
    });
    expect(response.body).toEqual({
      success: true,
      status: "reversed",
      deductionAmount: 67,
      commission_id: s.commissionId,
    });
    expect((await saleRow(s.saleId)).refundedCents).toBe(999);
    expect((await refundsOfSale(s.saleId)).map((r) => [r.requestedCents, r.amountCents])).toEqual([
      [333, 333],
      [1000, 666],
    ]);
    expect(await balanceOf(p.programId, p.partnerIds[0])).toBe(0);
  });

  it("reversed -> skipped, already reversed; nothing changes", async () => {
    const p = await createProgram();
    const s = await trackedSale(p, 10_000);
    await refund(p, { transaction_id: s.transactionId });
    const before = await commissionRow(s.commissionId!);
    for (const body of [
      { transaction_id: s.transactionId },
      { transaction_id: s.transactionId, refund_amount_cents: 100, refund_id: "late" },
      { transaction_id: s.transactionId, refund_amount_cents: 0 },
    ]) {
      const response = await refund(p, body);
      expect(response.status).toBe(200);
      expect(response.body).toEqual({
        success: true,
        status: "skipped",
        reason: "already reversed",
        commission_id: s.commissionId,
      });
    }
    expect(await commissionRow(s.commissionId!)).toEqual(before);
    expect(await refundsOfSale(s.saleId)).toHaveLength(1);
    expect(await balanceOf(p.programId, p.partnerIds[0])).toBe(0);
  });

  it("a repeated refund_id is skipped, whatever its amount", async () => {
    const p = await createProgram();
    const s = await trackedSale(p, 10_000);
    const body = { transaction_id: s.transactionId, refund_amount_cents: 1000, refund_id: "re_dup" };
    expect((await refund(p, body)).body).toMatchObject({ status: "refunded", deductionAmount: 200 });
    for (const again of [body, { ...body, refund_amount_cents: 2500 }, { ...body, reason: "chargeback" }]) {
      expect((await refund(p, again)).body).toEqual({
        success: true,
        status: "skipped",
        reason: "refund_id already applied",
        commission_id: s.commissionId,
      });
    }
    expect((await saleRow(s.saleId)).refundedCents).toBe(1000);
    expect(await refundsOfSale(s.saleId)).toHaveLength(1);
    expect(await commissionRow(s.commissionId!)).toMatchObject({
      deductedCents: 200,
      refundReason: "refund",
    });
    expect(await balanceOf(p.programId, p.partnerIds[0])).toBe(1800);
    // A different refund_id with the same amount is another refund.
    const next = await refund(p, { ...body, refund_id: "re_other" });
    expect(next.body).toMatchObject({ status: "refunded", deductionAmount: 200 });
    expect(await balanceOf(p.programId, p.partnerIds[0])).toBe(1600);
  });

  it("a blank refund_id is no id: the refund is keyed by its amount, and refunds of other amounts all apply", async () => {
    const p = await createProgram();
    const s = await trackedSale(p, 10_000);
    const first = { transaction_id: s.transactionId, refund_amount_cents: 1000, refund_id: "" };
    expect((await refund(p, first)).body).toMatchObject({ status: "refunded", deductionAmount: 200 });
    // Another blank id (spaces) with another amount is another refund, not a repeat of the id "".
    const second = { transaction_id: s.transactionId, refund_amount_cents: 500, refund_id: "   " };
    expect((await refund(p, second)).body).toMatchObject({ status: "refunded", deductionAmount: 100 });
    // The same amount again is a retry, as without refund_id.
    expect((await refund(p, first)).body).toEqual({
      success: true,
      status: "skipped",
      reason: "duplicate refund (same amount) ignored",
      commission_id: s.commissionId,
    });
    expect((await refundsOfSale(s.saleId)).map((r) => r.refundId)).toEqual([null, null]);
    expect((await saleRow(s.saleId)).refundedCents).toBe(1500);
  });

  it("the same amount without refund_id is a retry and is skipped", async () => {
    const p = await createProgram();
    const s = await trackedSale(p, 10_000);
    const body = { transaction_id: s.transactionId, refund_amount_cents: 1500 };
    expect((await refund(p, body)).body).toMatchObject({ status: "refunded", deductionAmount: 300 });
    expect((await refund(p, body)).body).toEqual({
      success: true,
      status: "skipped",
      reason: "duplicate refund (same amount) ignored",
      commission_id: s.commissionId,
    });
    // Another amount without refund_id is another refund.
    expect((await refund(p, { ...body, refund_amount_cents: 500 })).body).toMatchObject({
      status: "refunded",
      deductionAmount: 100,
    });
    expect((await saleRow(s.saleId)).refundedCents).toBe(2000);
    expect(await refundsOfSale(s.saleId)).toHaveLength(2);
    expect(await commissionRow(s.commissionId!)).toMatchObject({ deductedCents: 400 });
    expect(await balanceOf(p.programId, p.partnerIds[0])).toBe(1600);
  });

  it("a repeat is found among many refunds of the sale, by its refund_id or, without one, by its amount", async () => {
    const p = await createProgram();
    const s = await trackedSale(p, 100_000);
    for (const amount of [100, 200, 300, 400, 500]) {
      const body = {
        transaction_id: s.transactionId,
        refund_amount_cents: amount,
        refund_id: `re_${amount}`,
      };
      expect((await refund(p, body)).body).toMatchObject({ status: "refunded" });
    }
    await refund(p, { transaction_id: s.transactionId, refund_amount_cents: 600 });
    const skipped = (reason: string) => ({
      success: true,
      status: "skipped",
      reason,
      commission_id: s.commissionId,
    });
    const repeats: Array<[Record<string, unknown>, string]> = [
      [{ refund_amount_cents: 999, refund_id: "re_300" }, "refund_id already applied"],
      [{ refund_amount_cents: 300 }, "duplicate refund (same amount) ignored"], // applied under re_300
      [{ refund_amount_cents: 600 }, "duplicate refund (same amount) ignored"], // applied without an id
    ];
    for (const [body, reason] of repeats) {
      expect((await refund(p, { transaction_id: s.transactionId, ...body })).body).toEqual(skipped(reason));
    }
    // With a refund_id, an amount already applied under another id is another refund.
    expect(
      (await refund(p, { transaction_id: s.transactionId, refund_amount_cents: 300, refund_id: "re_new" }))
        .body,
    ).toMatchObject({ status: "refunded" });
    expect((await saleRow(s.saleId)).refundedCents).toBe(2400);
    expect(await refundsOfSale(s.saleId)).toHaveLength(7);
  });

  it("the endpoint's read carries only the applied refunds the call would repeat, not every refund of the sale", async () => {
    const p = await createProgram();
    const s = await trackedSale(p, 100_000);
    for (const amount of [100, 200, 300]) {
      await refund(p, {
        transaction_id: s.transactionId,
        refund_amount_cents: amount,
        refund_id: `re_${amount}`,
      });
    }
    await refund(p, { transaction_id: s.transactionId, refund_amount_cents: 200 }); // skipped: 200 applied
    await refund(p, { transaction_id: s.transactionId, refund_amount_cents: 400 });
    const keyHash = await sha256Hex(p.apiKey);
    const appliedRefunds = async (repeat: RefundRepeat | null) =>
      (await readRefundFacts(db, keyHash, s.transactionId, repeat)).facts?.appliedRefunds;
    expect(await appliedRefunds({ idempotencyKey: "id:re_200", amountCents: null })).toEqual([
      { idempotencyKey: "id:re_200", amountCents: 200 },
    ]);
    expect(await appliedRefunds({ idempotencyKey: "id:re_new", amountCents: null })).toEqual([]);
    expect(await appliedRefunds({ idempotencyKey: "amount:200", amountCents: 200 })).toEqual([
      { idempotencyKey: "id:re_200", amountCents: 200 },
    ]);
    expect(await appliedRefunds({ idempotencyKey: "amount:400", amountCents: 400 })).toEqual([
      { idempotencyKey: "amount:400", amountCents: 400 },
    ]);
    expect(await appliedRefunds({ idempotencyKey: "full", amountCents: null })).toEqual([]);
    expect(await appliedRefunds(null)).toEqual([]);
  });

  it("a worker deployed before migration 0051 still reads every applied refund, through its read and its batch", async () => {
    const p = await createProgram();
    const s = await trackedSale(p, 100_000);
    for (const amount of [100, 200]) {
      await refund(p, {
        transaction_id: s.transactionId,
        refund_amount_cents: amount,
        refund_id: `re_${amount}`,
      });
    }
    const keyHash = await sha256Hex(p.apiKey);
    const every = [
      { key: "id:re_100", amount: 100 },
      { key: "id:re_200", amount: 200 },
    ];
    const alone = await db.execute<{ sale: { refunds: unknown } }>(
      sql`select sale from read_refund_facts(${keyHash}, ${s.transactionId})`,
    );
    expect(alone.rows[0]?.sale.refunds).toEqual(every);
    const batched = await db.execute<{ sale: { refunds: unknown } }>(
      sql`select sale from read_refund_facts_batch(${JSON.stringify([[keyHash, s.transactionId]])}::jsonb)`,
    );
    expect(batched.rows[0]?.sale.refunds).toEqual(every);
  });

  it("a sale without commission -> no_commission with a message; the refund is still recorded once", async () => {
    const p = await createProgram({ commissionType: "percent" });
    const clickId = await click(p);
    await trackedSale(p, 5000, { clickId }); // the customer's first sale takes the one-time commission
    const second = await trackedSale(p, 4000, { clickId });
    expect(second.commissionId).toBeNull();
    const body = { transaction_id: second.transactionId, refund_amount_cents: 1000, refund_id: "nc" };
    const response = await refund(p, body);
    expect(response.status).toBe(200);
    expect(response.body).toEqual({
      success: true,
      status: "no_commission",
      message: "Refund recorded; this sale has no commission.",
    });
    expect((await saleRow(second.saleId)).refundedCents).toBe(1000);
    expect((await refund(p, body)).body).toEqual({
      success: true,
      status: "skipped",
      reason: "refund_id already applied",
      commission_id: null,
    });
    expect(await refundsOfSale(second.saleId)).toMatchObject([{ commissionId: null, amountCents: 1000 }]);
    expect(await balanceOf(p.programId, p.partnerIds[0])).toBe(1000); // the first sale's commission only
  });

  it("a paid-out commission: deduction taken, balance negative, flagged for review, both parties notified", async () => {
    const p = await createProgram({ commissionType: "percent", commissionRate: "20" });
    const s = await trackedSale(p, 10_000);
    const partner = p.partnerIds[0];
    await markPaidOut(s.commissionId!, 2000); // paid out: the balance went back to 0
    expect(await balanceOf(p.programId, partner)).toBe(0);

    const response = await refund(p, { transaction_id: s.transactionId, reason: "chargeback" });
    expect(response.body).toEqual({
      success: true,
      status: "reversed",
      deductionAmount: 2000,
      commission_id: s.commissionId,
    });
    expect(await commissionRow(s.commissionId!)).toMatchObject({
      status: "reversed",
      deductedCents: 2000,
      needsManualReview: true,
      refundReason: "chargeback",
    });
    expect(await balanceOf(p.programId, partner)).toBe(-2000);
    await expectBalanceMatchesLedger(p.programId, partner);

    const [row] = await refundsOfSale(s.saleId);
    expect(row).toMatchObject({ reason: "chargeback", refundReason: "chargeback", deductionCents: 2000 });
    const payload = {
      commission_id: s.commissionId,
      status: "reversed",
      deduction_cents: 2000,
      currency: "USD",
      reason: "chargeback",
    };
    expect(await expectNotification(`refund:${row!.id}:partner`)).toMatchObject({
      recipientType: "partner",
      recipientId: partner,
      kind: "commission_reversed",
      payload,
    });
    const [program] = (
      await db.execute<{ advertiser_id: number }>(
        sql`select advertiser_id from programs where id = ${p.programId}`,
      )
    ).rows;
    expect(await expectNotification(`refund:${row!.id}:advertiser`)).toMatchObject({
      recipientType: "advertiser",
      recipientId: Number(program!.advertiser_id),
      programId: p.programId,
      kind: "paid_commission_reversed_review",
      payload: { ...payload, partner_id: partner, action: "Review this paid-out commission manually." },
    });
  });

  it("a paid-out commission refunded in part stays flagged on later refunds", async () => {
    const p = await createProgram({ commissionType: "percent", commissionRate: "20" });
    const s = await trackedSale(p, 10_000);
    await markPaidOut(s.commissionId!, 2000);
    await refund(p, { transaction_id: s.transactionId, refund_amount_cents: 1000, refund_id: "one" });
    expect(await commissionRow(s.commissionId!)).toMatchObject({
      status: "refunded",
      deductedCents: 200,
      needsManualReview: true,
    });
    const response = await refund(p, {
      transaction_id: s.transactionId,
      refund_amount_cents: 1000,
      refund_id: "two",
    });
    expect(response.body).toMatchObject({ status: "refunded", deductionAmount: 200 });
    const rows = await refundsOfSale(s.saleId);
    expect(rows).toHaveLength(2);
    for (const row of rows) {
      expect(await expectNotification(`refund:${row.id}:advertiser`)).toMatchObject({
        kind: "paid_commission_reversed_review",
      });
    }
    expect(await balanceOf(p.programId, p.partnerIds[0])).toBe(-400);
    await expectBalanceMatchesLedger(p.programId, p.partnerIds[0]);
  });

  it("a commission marked paid by status alone stays paid out across partial refunds", async () => {
    const p = await createProgram({ commissionType: "percent", commissionRate: "20" });
    const s = await trackedSale(p, 10_000);
    await db.execute(sql`update commissions set status = 'paid' where id = ${s.commissionId}`);
    for (const refundId of ["one", "two"]) {
      const response = await refund(p, {
        transaction_id: s.transactionId,
        refund_amount_cents: 1000,
        refund_id: refundId,
      });
      expect(response.body).toMatchObject({ status: "refunded", deductionAmount: 200 });
      expect((await commissionRow(s.commissionId!)).paidOutAt).not.toBeNull();
    }
    const last = await refund(p, { transaction_id: s.transactionId });
    expect(last.body).toMatchObject({ status: "reversed", deductionAmount: 1600 });
    expect(await commissionRow(s.commissionId!)).toMatchObject({ needsManualReview: true });
    const rows = await refundsOfSale(s.saleId);
    expect(rows).toHaveLength(3);
    for (const row of rows) {
      expect(await expectNotification(`refund:${row.id}:advertiser`)).toMatchObject({
        kind: "paid_commission_reversed_review",
      });
    }
  });

  it("open withdrawals are reduced to fit the balance, oldest kept first; a consumed one is cancelled", async () => {
    const p = await createProgram({ commissionType: "percent", commissionRate: "20" });
    const [partner, otherPartner] = p.partnerIds;
    const s = await trackedSale(p, 10_000); // 2000 credited to partner A
    await trackedSale(p, 10_000, { partner: 1 }); // 2000 credited to partner B
    const base = Date.now() - 10 * day;
    const at = (days: number) => new Date(base + days * day);
    // Inserted out of age order: the age decides who is kept, not the id.
    const rows = await db
      .insert(withdrawals)
      .values([
        { programId: p.programId, partnerId: partner, currency: "USD", amountCents: 400, createdAt: at(3) },
        { programId: p.programId, partnerId: partner, currency: "USD", amountCents: 800, createdAt: at(1) },
        { programId: p.programId, partnerId: partner, currency: "USD", amountCents: 700, createdAt: at(2) },
        {
          programId: p.programId,
          partnerId: partner,
          currency: "USD",
          amountCents: 900,
          status: "paid",
          createdAt: at(0),
        },
        {
          programId: p.programId,
          partnerId: otherPartner,
          currency: "USD",
          amountCents: 1900,
          createdAt: at(1),
        },
      ])
      .returning();
    const response = await refund(p, { transaction_id: s.transactionId, refund_amount_cents: 5000 });
    expect(response.body).toMatchObject({ status: "refunded", deductionAmount: 1000 });
    expect(await balanceOf(p.programId, partner)).toBe(1000);
    const after = new Map((await withdrawalsOf(p.programId)).map((w) => [w.id, w]));
    const [newest, oldest, middle, paid, others] = rows.map((w) => after.get(w.id)!);
    expect(oldest).toMatchObject({ amountCents: 800, status: "open" });
    expect(middle).toMatchObject({ amountCents: 200, status: "open" });
    expect(newest).toMatchObject({ amountCents: 0, status: "cancelled" });
    expect(paid).toMatchObject({ amountCents: 900, status: "paid" });
    expect(others).toMatchObject({ amountCents: 1900, status: "open" });

    // Past zero (a payout took 900 meanwhile): every open withdrawal is cancelled; the balance goes negative.
    await db.execute(
      sql`update partner_balances set balance_cents = 100 where program_id = ${p.programId} and partner_id = ${partner}`,
    );
    await db.execute(
      sql`insert into balance_ledger (program_id, partner_id, currency, amount_cents, cause)
          values (${p.programId}, ${partner}, 'USD', -900, 'withdrawal')`,
    );
    const full = await refund(p, { transaction_id: s.transactionId });
    expect(full.body).toMatchObject({ status: "reversed", deductionAmount: 1000 });
    expect(await balanceOf(p.programId, partner)).toBe(-900);
    await expectBalanceMatchesLedger(p.programId, partner);
    const final = new Map((await withdrawalsOf(p.programId)).map((w) => [w.id, w]));
    expect(final.get(oldest!.id)).toMatchObject({ amountCents: 0, status: "cancelled" });
    expect(final.get(middle!.id)).toMatchObject({ amountCents: 0, status: "cancelled" });
    expect(final.get(others!.id)).toMatchObject({ amountCents: 1900, status: "open" });
  });

  it("a chargeback is recorded with reason chargeback; refund_reason wins when given", async () => {
    const p = await createProgram({ commissionType: "recurring_percent", commissionRate: "10" });
    const clickId = await click(p);
    const cases: Array<{ extra: Record<string, unknown>; reason: string; recorded: string }> = [
      { extra: { reason: "chargeback" }, reason: "chargeback", recorded: "chargeback" },
      { extra: { reason: "chargeback", refund_reason: "" }, reason: "chargeback", recorded: "chargeback" },
      { extra: { reason: "chargeback", refund_reason: "   " }, reason: "chargeback", recorded: "chargeback" },
      {
        extra: { reason: "chargeback", refund_reason: "Card reported stolen" },
        reason: "chargeback",
        recorded: "Card reported stolen",
      },
      { extra: { reason: "refund" }, reason: "refund", recorded: "refund" },
      { extra: {}, reason: "refund", recorded: "refund" },
      { extra: { reason: null, refund_reason: null }, reason: "refund", recorded: "refund" },
    ];
    for (const { extra, reason, recorded } of cases) {
      const s = await trackedSale(p, 1000, { clickId });
      const response = await refund(p, {
        transaction_id: s.transactionId,
        refund_amount_cents: 500,
        ...extra,
      });
      expect(response.body).toMatchObject({ status: "refunded", deductionAmount: 50 });
      expect((await commissionRow(s.commissionId!)).refundReason).toBe(recorded);
      expect(await refundsOfSale(s.saleId)).toMatchObject([{ reason, refundReason: recorded }]);
    }
  });
});
