import { sql } from "drizzle-orm";
import { beforeAll, describe, expect, it } from "vitest";
import { createProgram, db, type ProgramFixture, postJson } from "./harness.ts";
import { recordClick } from "./lead-helpers.ts";
import { txn } from "./sale-harness.ts";

/**
 * Input the database cannot store (a NUL in any text or jsonb value, an integer beyond `integer`) is a 400
 * naming the field, on every tracking route, before anything is written; never a 500.
 */
const bad = (message: string, code?: string) => ({
  data: null,
  error: { status: 400, name: "BadRequestError", message, details: {}, ...(code ? { code } : {}) },
});

async function rowsOf(programId: number): Promise<Record<string, number>> {
  const result = await db.execute<Record<string, string>>(sql`
    select
      (select count(*) from affiliate_click_events where program_id = ${programId}) as clicks,
      (select count(*) from affiliate_lead_events where program_id = ${programId}) as leads,
      (select count(*) from affiliate_sale_events where program_id = ${programId}) as sales,
      (select count(*) from customers where program_id = ${programId}) as customers,
      (select count(*) from affiliate_visit_events where program_id = ${programId}) as visits,
      (select count(*) from refunds r join affiliate_sale_events s on s.id = r.sale_id
        where s.program_id = ${programId}) as refunds`);
  return Object.fromEntries(Object.entries(result.rows[0]!).map(([k, v]) => [k, Number(v)]));
}

const tooBig = 2 ** 31;
const nul = "\u0000";
/** A high surrogate without its low half, and a low one alone: JSON carries them as `\ud800` escapes. */
const highAlone = "\ud800";
const lowAlone = "\udfff";

/** `{"a":{"a":...{}}}`, `levels` objects deep, as JSON text (`JSON.stringify` itself overflows the stack). */
const nestedObjects = (levels: number) => `${'{"a":'.repeat(levels - 1)}{}${"}".repeat(levels - 1)}`;

/** `[[...[1]]]`, `levels` arrays deep, as JSON text. */
const nestedArrays = (levels: number) => `${"[".repeat(levels)}1${"]".repeat(levels)}`;

/** A body of `fields` and one more field given as JSON text. */
const withJsonField = (fields: Record<string, unknown>, name: string, json: string) =>
  `${JSON.stringify(fields).slice(0, -1)},"${name}":${json}}`;

interface Case {
  name: string;
  path: string;
  /** `key`: the program's live key as Bearer. */
  auth?: "key";
  body: (p: ProgramFixture, clickId: string) => unknown;
  expected: ReturnType<typeof bad>;
}

const click = "/api/v1/track/click";
const lead = "/api/v1/track/lead";
const sale = "/api/v1/track/sale";
const refund = "/api/v1/track/refund";
const visit = "/api/v1/track/visit";
const landing = (p: ProgramFixture) => `https://shop.example/?aff=${p.links[0]}`;

const cases: Case[] = [
  // click
  {
    name: "click: NUL in affiliate_url",
    path: click,
    body: (p) => ({ affiliate_url: `${landing(p)}&x=${nul}` }),
    expected: bad("affiliate_url must not contain NUL characters"),
  },
  {
    name: "click: percent-encoded NUL in the referral code",
    path: click,
    body: () => ({ affiliate_url: "https://shop.example/?aff=%00code" }),
    expected: bad("Invalid affiliate_url"),
  },
  {
    name: "click: control character in click_id",
    path: click,
    body: (p) => ({ affiliate_url: landing(p), click_id: `clk_${nul}` }),
    expected: bad("click_id must not contain control characters"),
  },
  {
    name: "click: tab in click_id",
    path: click,
    body: (p) => ({ affiliate_url: landing(p), click_id: "clk_\tx" }),
    expected: bad("click_id must not contain control characters"),
  },
  {
    name: "click: NUL in referrer",
    path: click,
    body: (p) => ({ affiliate_url: landing(p), referrer: `https://a.example/${nul}` }),
    expected: bad("referrer must not contain NUL characters"),
  },
  {
    name: "click: NUL in an additional_data value",
    path: click,
    body: (p) => ({ affiliate_url: landing(p), additional_data: { note: { deep: [`x${nul}`] } } }),
    expected: bad("additional_data.note.deep[0] must not contain NUL characters"),
  },
  {
    name: "click: NUL in an additional_data key",
    path: click,
    body: (p) => ({ affiliate_url: landing(p), additional_data: { [`k${nul}`]: 1 } }),
    expected: bad("additional_data must not contain NUL characters"),
  },
  {
    name: "click: program_id 2^31",
    path: click,
    body: (p) => ({ affiliate_url: landing(p), program_id: tooBig }),
    expected: bad("Unknown program_id"),
  },
  {
    name: "click: additional_data.program_id 2^31",
    path: click,
    body: (p) => ({ affiliate_url: landing(p), additional_data: { program_id: tooBig } }),
    expected: bad("Unknown program_id"),
  },
  {
    name: "click: referrer over 2048 characters",
    path: click,
    body: (p) => ({ affiliate_url: landing(p), referrer: `https://a.example/${"r".repeat(2048)}` }),
    expected: bad("referrer must be at most 2048 characters"),
  },
  {
    name: "click: click_id over 128 characters",
    path: click,
    body: (p) => ({ affiliate_url: landing(p), click_id: "c".repeat(129) }),
    expected: bad("click_id must be at most 128 characters"),
  },
  // lead
  {
    name: "lead: NUL in customer_key",
    path: lead,
    auth: "key",
    body: (_p, clickId) => ({ click_id: clickId, customer_key: `user${nul}` }),
    expected: bad("customer_key must not contain control characters"),
  },
  {
    name: "lead: NUL in click_id",
    path: lead,
    body: () => ({ click_id: `clk_${nul}` }),
    expected: bad("click_id must not contain control characters"),
  },
  {
    name: "lead: NUL in email",
    path: lead,
    auth: "key",
    body: (_p, clickId) => ({ click_id: clickId, customer_key: "u1", email: `a${nul}b@example.com` }),
    expected: bad("email must not contain NUL characters"),
  },
  {
    name: "lead: NUL in additional_data.event_name",
    path: lead,
    auth: "key",
    body: (_p, clickId) => ({ click_id: clickId, additional_data: { event_name: `sign${nul}up` } }),
    expected: bad("additional_data.event_name must not contain NUL characters"),
  },
  {
    name: "lead: program_id 2^31 (a program the click is not of, as any other)",
    path: lead,
    body: (_p, clickId) => ({ click_id: clickId, program_id: tooBig }),
    expected: bad("Customer not found. Provide a valid click_id or customer_key."),
  },
  {
    name: "lead: additional_data.program_id 2^31",
    path: lead,
    body: (_p, clickId) => ({ click_id: clickId, additional_data: { test_mode: true, program_id: tooBig } }),
    expected: bad("Unknown program_id"),
  },
  {
    name: "lead: click_id over 128 characters",
    path: lead,
    body: () => ({ click_id: "c".repeat(129) }),
    expected: bad("click_id must be at most 128 characters"),
  },
  // sale (every error carries error.code)
  {
    name: "sale: NUL in transaction_id",
    path: sale,
    auth: "key",
    body: () => ({ transaction_id: `txn${nul}`, amount_cents: 100 }),
    expected: bad("transaction_id must not contain control characters", "invalid_request"),
  },
  {
    name: "sale: NUL in customer_key",
    path: sale,
    auth: "key",
    body: () => ({ transaction_id: txn(), amount_cents: 100, customer_key: `c${nul}` }),
    expected: bad("customer_key must not contain control characters", "invalid_request"),
  },
  {
    name: "sale: NUL in click_id",
    path: sale,
    auth: "key",
    body: () => ({ transaction_id: txn(), amount_cents: 100, click_id: `clk_${nul}` }),
    expected: bad("click_id must not contain control characters", "invalid_request"),
  },
  {
    name: "sale: NUL in product_id",
    path: sale,
    auth: "key",
    body: () => ({ transaction_id: txn(), amount_cents: 100, product_id: `p${nul}` }),
    expected: bad("product_id must not contain control characters", "invalid_request"),
  },
  {
    name: "sale: NUL in a line_items value",
    path: sale,
    auth: "key",
    body: () => ({ transaction_id: txn(), amount_cents: 100, line_items: [{ name: `a${nul}` }] }),
    expected: bad("line_items[0].name must not contain NUL characters", "invalid_request"),
  },
  {
    name: "sale: NUL in a line_items key",
    path: sale,
    auth: "key",
    body: () => ({ transaction_id: txn(), amount_cents: 100, line_items: { [`a${nul}`]: 1 } }),
    expected: bad("line_items must not contain NUL characters", "invalid_request"),
  },
  {
    name: "sale: line_items objects nested 9,000 deep (the stack's limit, once a 500)",
    path: sale,
    auth: "key",
    body: () =>
      withJsonField({ transaction_id: txn(), amount_cents: 100 }, "line_items", nestedObjects(9000)),
    expected: bad("line_items must not be nested more than 64 levels deep", "invalid_request"),
  },
  {
    name: "sale: line_items arrays nested 3,000 deep (PostgreSQL's jsonb limit, once a 500)",
    path: sale,
    auth: "key",
    body: () =>
      withJsonField(
        { transaction_id: txn(), amount_cents: 100 },
        "line_items",
        `{"x":${nestedArrays(3000)}}`,
      ),
    expected: bad("line_items must not be nested more than 64 levels deep", "invalid_request"),
  },
  {
    name: "sale: line_items nested 65 deep, one level over",
    path: sale,
    auth: "key",
    body: () => withJsonField({ transaction_id: txn(), amount_cents: 100 }, "line_items", nestedObjects(65)),
    expected: bad("line_items must not be nested more than 64 levels deep", "invalid_request"),
  },
  {
    name: "sale: additional_data nested 9,000 deep",
    path: sale,
    auth: "key",
    body: () =>
      withJsonField({ transaction_id: txn(), amount_cents: 100 }, "additional_data", nestedObjects(9000)),
    expected: bad("additional_data must not be nested more than 64 levels deep", "invalid_request"),
  },
  {
    name: "lead: additional_data nested 9,000 deep",
    path: lead,
    body: (_p, clickId) =>
      withJsonField(
        { click_id: clickId },
        "additional_data",
        `{"event_name":"x","deep":${nestedObjects(9000)}}`,
      ),
    expected: bad("additional_data must not be nested more than 64 levels deep"),
  },
  {
    name: "refund: additional_data nested 9,000 deep",
    path: refund,
    auth: "key",
    body: () => withJsonField({ transaction_id: txn() }, "additional_data", nestedObjects(9000)),
    expected: bad("additional_data must not be nested more than 64 levels deep", "invalid_request"),
  },
  {
    name: "sale: NUL in additional_data",
    path: sale,
    auth: "key",
    body: () => ({ transaction_id: txn(), amount_cents: 100, additional_data: { note: nul } }),
    expected: bad("additional_data.note must not contain NUL characters", "invalid_request"),
  },
  // refund
  {
    name: "refund: NUL in transaction_id",
    path: refund,
    auth: "key",
    body: () => ({ transaction_id: `txn${nul}` }),
    expected: bad("transaction_id must not contain control characters", "invalid_request"),
  },
  {
    name: "refund: NUL in refund_id",
    path: refund,
    auth: "key",
    body: () => ({ transaction_id: txn(), refund_id: `re${nul}` }),
    expected: bad("refund_id must not contain control characters", "invalid_request"),
  },
  {
    name: "refund: NUL in refund_reason",
    path: refund,
    auth: "key",
    body: () => ({ transaction_id: txn(), refund_reason: `why${nul}` }),
    expected: bad("refund_reason must not contain NUL characters", "invalid_request"),
  },
  // lone surrogates: not Unicode text (jsonb refuses them; as text they became U+FFFD, so keys collided)
  {
    name: "click: lone surrogate in referrer",
    path: click,
    body: (p) => ({ affiliate_url: landing(p), referrer: `https://a.example/${highAlone}` }),
    expected: bad("referrer must not contain unpaired surrogates"),
  },
  {
    name: "click: lone surrogate in an additional_data key",
    path: click,
    body: (p) => ({ affiliate_url: landing(p), additional_data: { [`k${lowAlone}`]: 1 } }),
    expected: bad("additional_data must not contain unpaired surrogates"),
  },
  {
    name: "lead: lone surrogate in customer_key",
    path: lead,
    auth: "key",
    body: (_p, clickId) => ({ click_id: clickId, customer_key: `k-${highAlone}` }),
    expected: bad("customer_key must not contain unpaired surrogates"),
  },
  {
    name: "lead: a low surrogate before its high one is no pair",
    path: lead,
    auth: "key",
    body: (_p, clickId) => ({ click_id: clickId, customer_key: `k-${lowAlone}${highAlone}` }),
    expected: bad("customer_key must not contain unpaired surrogates"),
  },
  {
    name: "sale: lone surrogate in transaction_id",
    path: sale,
    auth: "key",
    body: () => ({ transaction_id: `lone-${highAlone}`, amount_cents: 100 }),
    expected: bad("transaction_id must not contain unpaired surrogates", "invalid_request"),
  },
  {
    name: "sale: lone surrogate in customer_key",
    path: sale,
    auth: "key",
    body: () => ({ transaction_id: txn(), amount_cents: 100, customer_key: `k-${lowAlone}` }),
    expected: bad("customer_key must not contain unpaired surrogates", "invalid_request"),
  },
  {
    name: "sale: lone surrogate in a line_items value",
    path: sale,
    auth: "key",
    body: () => ({ transaction_id: txn(), amount_cents: 100, line_items: { n: highAlone } }),
    expected: bad("line_items.n must not contain unpaired surrogates", "invalid_request"),
  },
  {
    name: "sale: lone surrogate in product_id",
    path: sale,
    auth: "key",
    body: () => ({ transaction_id: txn(), amount_cents: 100, product_id: `p${lowAlone}` }),
    expected: bad("product_id must not contain unpaired surrogates", "invalid_request"),
  },
  {
    name: "refund: lone surrogate in refund_id",
    path: refund,
    auth: "key",
    body: () => ({ transaction_id: txn(), refund_amount_cents: 100, refund_id: `re_${highAlone}x` }),
    expected: bad("refund_id must not contain unpaired surrogates", "invalid_request"),
  },
  {
    name: "refund: lone surrogate in refund_reason",
    path: refund,
    auth: "key",
    body: () => ({ transaction_id: txn(), refund_reason: `why${lowAlone}` }),
    expected: bad("refund_reason must not contain unpaired surrogates", "invalid_request"),
  },
  // visit
  {
    name: "visit: NUL in url",
    path: visit,
    body: (_p, clickId) => ({ click_id: clickId, url: `https://shop.example/${nul}` }),
    expected: bad("url must not contain NUL characters"),
  },
  {
    name: "visit: NUL in referrer",
    path: visit,
    body: (_p, clickId) => ({ click_id: clickId, url: "https://shop.example/", referrer: nul }),
    expected: bad("referrer must not contain NUL characters"),
  },
  {
    name: "visit: NUL in click_id",
    path: visit,
    body: () => ({ click_id: `clk_${nul}`, url: "https://shop.example/" }),
    expected: bad("click_id must not contain control characters"),
  },
  {
    name: "visit: program_id 2^31 (no click of that program, as before)",
    path: visit,
    body: (_p, clickId) => ({ click_id: clickId, url: "https://shop.example/", program_id: tooBig }),
    expected: bad("Unknown click_id"),
  },
  {
    name: "visit: referrer over 2048 characters",
    path: visit,
    body: (_p, clickId) => ({ click_id: clickId, url: "https://shop.example/", referrer: "r".repeat(2049) }),
    expected: bad("referrer must be at most 2048 characters"),
  },
];

describe("a program_id beyond the integer ids names no program, and is refused as any other would be", () => {
  let p: ProgramFixture;
  let clickId: string;
  beforeAll(async () => {
    p = await createProgram();
    clickId = await recordClick(p.links[0]);
  });
  const withKey = () => ({ Authorization: `Bearer ${p.apiKey}` });

  it("test-mode click with the key: 403, as for any other program's id", async () => {
    const response = await postJson(
      click,
      { affiliate_url: landing(p), additional_data: { test_mode: true, program_id: tooBig } },
      withKey(),
    );
    expect(response.status).toBe(403);
    expect(response.body).toEqual({
      data: null,
      error: {
        status: 403,
        name: "ForbiddenError",
        message: "program_id does not match the API key",
        details: {},
      },
    });
  });

  it("test-mode lead with the key: 403, as for any other program's id", async () => {
    const response = await postJson(
      lead,
      { click_id: clickId, additional_data: { test_mode: true, program_id: tooBig } },
      withKey(),
    );
    expect(response.status).toBe(403);
    expect(response.body).toMatchObject({ error: { message: "program_id does not match the API key" } });
  });

  it("server lead: the top-level program_id is not read (the key's program decides)", async () => {
    const before = await rowsOf(p.programId);
    const response = await postJson(
      lead,
      { click_id: clickId, customer_key: "beyond-ids", program_id: tooBig },
      withKey(),
    );
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({ success: true });
    expect((await rowsOf(p.programId)).leads).toBe((before.leads ?? 0) + 1);
  });
});

describe("input the database cannot store is a 400 naming the field", () => {
  let p: ProgramFixture;
  let clickId: string;
  beforeAll(async () => {
    p = await createProgram();
    clickId = await recordClick(p.links[0]);
  });

  it.each(cases)("$name", async ({ path, auth, body, expected }) => {
    const before = await rowsOf(p.programId);
    const response = await postJson(
      path,
      body(p, clickId),
      auth === "key" ? { Authorization: `Bearer ${p.apiKey}` } : {},
    );
    expect(response.body).toEqual(expected);
    expect(response.status).toBe(400);
    expect(await rowsOf(p.programId)).toEqual(before);
  });

  it("still stores tabs and newlines in free text (only ids refuse every control character)", async () => {
    const response = await postJson(click, {
      affiliate_url: landing(p),
      referrer: "https://a.example/\tline\nnext",
    });
    expect(response.status).toBe(200);
  });
});
