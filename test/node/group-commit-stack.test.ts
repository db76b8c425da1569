/**
 * The group commit (`lib/db/group-commit.ts`) in the Workers runtime: clicks (`record_clicks`), the reads of
 * leads, sales and refunds, and the writes of server leads, provisional browser leads, sales and refunds
 * (`write_leads`, `write_provisional_leads`, `write_sales`, `write_refunds`, and `record_leads_at_once`,
 * `record_sales_at_once` and `record_refunds_at_once` for a lead, a sale or a refund the database decides, each
 * write in a subtransaction of its own) that reach one isolate while their kind is on its
 * way to the database go together, as one statement. Each must be answered as it would be alone, each accepted
 * event recorded once, a batch the database refuses must cost nothing, and a batch whose answer is lost must
 * fail its requests as a lone write's loss does, never writing twice.
 *
 * On the local stack (`npm run dev`, in-process: the workers in workerd, the SQL endpoint on PGlite, or on the
 * PostgreSQL of DATABASE_URL), not in
 * the workers project: that one runs the worker inside the test runner's Durable Object, where a request
 * cannot go on from a promise another request resolved (it sets `GROUP_COMMIT=off`).
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import autocannon, { type AutocannonResult } from "autocannon";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type LocalStack, startLocalStack } from "../../dev/local-stack.ts";
import type { DemoProgram } from "../../dev/seed.ts";
import { UNSCOPED } from "../../dev/sql-faults.ts";
import { issueApiKey } from "../../lib/auth/api-keys.ts";

let dataDir: string;
let stack: LocalStack;
let program: DemoProgram;
/** Calls of the click's batch function and of the click's own, as the SQL endpoint received them. */
const calls = { batch: 0, alone: 0 };
/** Calls of each read's batch function, and of each write's (`write_leads`, `record_sales_at_once`, ...). */
const readBatches: Record<string, number> = {};
const writeBatches: Record<string, number> = {};
let ip = 0;

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), "group-commit-stack-"));
  stack = await startLocalStack({
    dataDir,
    port: 0,
    // On the PostgreSQL of DATABASE_URL when set (CI's second run): batches then meet real concurrency and locks.
    databaseUrl: /^postgres(ql)?:\/\//.test(process.env.DATABASE_URL ?? "")
      ? process.env.DATABASE_URL
      : undefined,
    logLevel: "error",
    onStatement: (query) => {
      if (query.startsWith("select * from record_clicks(")) calls.batch++;
      if (query.startsWith("select * from record_click_with_dimensions(")) calls.alone++;
      const read = /^select \* from (read_\w+_batch)\(/.exec(query)?.[1];
      if (read) readBatches[read] = (readBatches[read] ?? 0) + 1;
      const write =
        /^select \* from (write_leads|write_provisional_leads|write_sales|write_refunds|record_sales_at_once|record_refunds_at_once|record_leads_at_once)\(/.exec(
          query,
        )?.[1];
      if (write) writeBatches[write] = (writeBatches[write] ?? 0) + 1;
    },
  });
  program = stack.demo?.programs[0] as DemoProgram;
}, 90_000);

afterAll(async () => {
  await stack?.stop();
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
}, 30_000);

async function post(
  path: string,
  body: Record<string, unknown>,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: Record<string, unknown> }> {
  ip++;
  const response = await fetch(`${stack.baseUrl}${path}`, {
    method: "POST",
    headers: {
      "Content-Type": "application/json",
      "CF-Connecting-IP": `10.66.${ip >> 8}.${ip & 255}`,
      ...headers,
    },
    body: JSON.stringify(body),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

const click = (body: Record<string, unknown>) => post("/api/v1/track/click", body);

const url = (code: string) => `https://shop.example/landing?aff=${code}`;

type Kind = "new" | "retained" | "unknown link" | "disabled link";
const KINDS: Kind[] = ["new", "retained", "unknown link", "disabled link"];

/** Forty clicks of four kinds, interleaved, sent at once. */
async function clicksTogether(visitorClickId: string) {
  const kinds = Array.from({ length: 40 }, (_, i) => KINDS[i % KINDS.length] as Kind);
  const body = (kind: Kind) => {
    switch (kind) {
      case "new":
        return { affiliate_url: url(program.active_links[0]) };
      case "retained":
        return { affiliate_url: url(program.active_links[1]), click_id: visitorClickId };
      case "unknown link":
        return { affiliate_url: url("no-such-code-anywhere") };
      case "disabled link":
        return { affiliate_url: url(program.disabled_link) };
    }
  };
  const answers = await Promise.all(kinds.map((kind) => click(body(kind))));
  return kinds.map((kind, i) => ({ kind, ...(answers[i] as Awaited<ReturnType<typeof click>>) }));
}

type Answers = Awaited<ReturnType<typeof clicksTogether>>;

/** Each kind's answer is the one a click of that kind gets alone (spec: POST /api/v1/track/click). */
function expectAnsweredAsAlone(answers: Answers, visitorClickId: string) {
  const window = program.attribution_window_days;
  for (const { kind, status, body } of answers) {
    const expected = {
      new: {
        status: 200,
        body: { success: true, click_id: expect.stringMatching(/^clk_/), cookie_window_days: window },
      },
      retained: {
        status: 200,
        body: { success: true, click_id: visitorClickId, cookie_window_days: window },
      },
      "unknown link": {
        status: 400,
        body: {
          data: null,
          error: { status: 400, name: "BadRequestError", message: "Referral link not found", details: {} },
        },
      },
      "disabled link": {
        status: 410,
        body: {
          success: false,
          message: "This referral link has been disabled",
          hint: expect.any(String),
          error: {
            code: "link_disabled",
            message: "This referral link has been disabled",
            hint: expect.any(String),
          },
        },
      },
    }[kind];
    expect({ kind, status, body }).toEqual({ kind, ...expected });
  }
}

/** Every accepted click is one row: the new ones under their own ids, the retained ones under the visitor's. */
async function expectRecordedOnce(answers: Answers, visitorClickId: string) {
  const newIds = answers.filter((a) => a.kind === "new").map((a) => a.body.click_id as string);
  expect(new Set(newIds).size).toBe(newIds.length);
  const { rows } = await stack.sql.query(
    `select click_id, visitor_click_id, partner_id, link_id from affiliate_click_events
      where click_id = any($1::text[]) or visitor_click_id = $2 order by id`,
    [newIds, visitorClickId],
  );
  const fresh = rows.filter((row) => row.visitor_click_id === null);
  expect(fresh.map((row) => row.click_id).sort()).toEqual([...newIds].sort());
  const retained = rows.filter((row) => row.visitor_click_id === visitorClickId);
  expect(retained).toHaveLength(answers.filter((a) => a.kind === "retained").length);
  // Each retained click is the second partner's (its own link's), logged under the visitor's first click id.
  expect(new Set(retained.map((row) => row.partner_id)).size).toBe(1);
  expect(retained[0]?.partner_id).not.toBe(fresh[0]?.partner_id);
}

async function visitorClick(): Promise<string> {
  const first = await click({ affiliate_url: url(program.active_links[0]) });
  expect(first.status).toBe(200);
  return first.body.click_id as string;
}

describe("clicks arriving together (the click's group commit, local stack)", () => {
  it("answers each click as it would be answered alone, records each accepted one once, in fewer round trips", async () => {
    const visitorClickId = await visitorClick();
    const before = { ...calls, roundTrips: stack.sql.stats().requests };
    const answers = await clicksTogether(visitorClickId);
    const roundTrips = stack.sql.stats().requests - before.roundTrips;
    expectAnsweredAsAlone(answers, visitorClickId);
    await expectRecordedOnce(answers, visitorClickId);
    expect(calls.batch).toBeGreaterThan(before.batch);
    expect(roundTrips).toBeLessThan(answers.length);
    expect(roundTrips).toBe(calls.batch - before.batch + (calls.alone - before.alone));
  });

  it("answers every click of a sustained load (10 connections, 3 s) as recorded, in batches", async () => {
    const before = { ...calls };
    let n = 0;
    const result = await new Promise<AutocannonResult>((resolve, reject) =>
      autocannon(
        {
          url: stack.baseUrl,
          connections: 10,
          duration: 3,
          requests: [
            {
              method: "POST",
              path: "/api/v1/track/click",
              setupRequest: (request) => {
                n++;
                return {
                  ...request,
                  headers: {
                    "content-type": "application/json",
                    "cf-connecting-ip": `10.67.${(n >> 8) & 255}.${n & 255}`,
                  },
                  body: JSON.stringify({ affiliate_url: url(program.active_links[n % 2] as string) }),
                };
              },
            },
          ],
        },
        (error, answer) => (error ? reject(error) : resolve(answer)),
      ),
    );
    // No click fails under load (a request resumed outside its own once did, on PostgreSQL: group-commit.ts).
    expect(result.non2xx).toBe(0);
    expect(result.errors).toBe(0);
    expect(result.requests.total).toBeGreaterThan(200);
    const statements = calls.batch - before.batch + (calls.alone - before.alone);
    expect(statements).toBeLessThan(result.requests.total / 2);
  });

  it("sends each click of a batch the database refused again alone: none is lost or recorded twice", async () => {
    const visitorClickId = await visitorClick();
    stack.sql.faults.arm(UNSCOPED, { mode: "error", match: "record_clicks(", code: "40001", times: 1 });
    const batchesBefore = calls.batch;
    const answers = await clicksTogether(visitorClickId);
    const state = stack.sql.faults.clear(UNSCOPED);
    expect(calls.batch).toBeGreaterThan(batchesBefore);
    expect(state.fired).toBe(1);
    expectAnsweredAsAlone(answers, visitorClickId);
    await expectRecordedOnce(answers, visitorClickId);
  });

  it("answers the route's 500 to every click only when each fails alone too, and records none", async () => {
    const visitorClickId = await visitorClick();
    stack.sql.faults.arm(UNSCOPED, { mode: "error", match: "record_click", code: "08006", times: 1_000 });
    const answers = await clicksTogether(visitorClickId);
    const state = stack.sql.faults.clear(UNSCOPED);
    // Each click's statement failed at least once alone: the batches' failures were sent again.
    expect(state.fired).toBeGreaterThanOrEqual(answers.length);
    for (const { status, body } of answers) {
      expect({ status, body }).toEqual({
        status: 500,
        body: {
          data: null,
          error: { status: 500, name: "InternalServerError", message: "Click tracking failed", details: {} },
        },
      });
    }
    const { rows } = await stack.sql.query(
      "select count(*)::int as n from affiliate_click_events where visitor_click_id = $1",
      [visitorClickId],
    );
    expect(rows[0]?.n).toBe("0");
  });
});

describe("leads, sales and refunds arriving together (local stack)", () => {
  it("answers each as alone and writes each once, the reads and the writes sent in batches", async () => {
    const key = { Authorization: `Bearer ${program.api_key}` };
    const run = crypto.randomUUID().slice(0, 8);
    const n = 20;
    const clickIds = await Promise.all(
      Array.from(
        { length: n },
        async () => (await click({ affiliate_url: url(program.active_links[0]) })).body.click_id as string,
      ),
    );
    const before = { ...readBatches };
    const writesBefore = { ...writeBatches };
    const leads = await Promise.all(
      clickIds.map((clickId, i) =>
        post("/api/v1/track/lead", { click_id: clickId, customer_key: `stack-${run}-${i}` }, key),
      ),
    );
    expect(leads.map((a) => [a.status, a.body.success])).toEqual(clickIds.map(() => [200, true]));
    const sales = await Promise.all(
      clickIds.map((_, i) =>
        post(
          "/api/v1/track/sale",
          { transaction_id: `stack-${run}-${i}`, amount_cents: 10_000, customer_key: `stack-${run}-${i}` },
          key,
        ),
      ),
    );
    expect(sales.map((a) => [a.status, a.body.success])).toEqual(clickIds.map(() => [200, true]));
    const refunds = await Promise.all(
      clickIds.map((_, i) =>
        post(
          "/api/v1/track/refund",
          { transaction_id: `stack-${run}-${i}`, refund_amount_cents: 100, refund_id: `stack-${run}-r${i}` },
          key,
        ),
      ),
    );
    expect(refunds.map((a) => [a.status, a.body.success])).toEqual(clickIds.map(() => [200, true]));

    // A lead, a sale or a refund the database decides is read, decided and written by one call: no read batch.
    for (const read of ["read_lead_facts_batch", "read_sale_facts_batch", "read_refund_and_repeats_batch"]) {
      expect((readBatches[read] ?? 0) - (before[read] ?? 0), read).toBe(0);
    }
    for (const write of ["record_leads_at_once", "record_sales_at_once", "record_refunds_at_once"]) {
      expect((writeBatches[write] ?? 0) - (writesBefore[write] ?? 0), write).toBeGreaterThan(0);
    }
    // Each sale once, each with its one commission, each refunded once (100 of 10,000 cents).
    const { rows } = await stack.sql.query(
      `select s.processor_event_id, s.refunded_cents,
              (select count(*) from commissions c where c.sale_id = s.id) as commissions,
              (select count(*) from refunds r where r.sale_id = s.id) as refunds
         from affiliate_sale_events s where s.processor_event_id like $1 order by s.processor_event_id`,
      [`stack-${run}-%`],
    );
    expect(rows).toHaveLength(n);
    for (const row of rows) {
      expect(row).toMatchObject({ refunded_cents: "100", commissions: "1", refunds: "1" });
    }
    await expectBalancesMatchLedger();
  });

  it("browser leads under server_required: each answered provisional and written once, the writes in batches", async () => {
    expect(program.lead_auth_policy).toBe("server_required");
    const run = crypto.randomUUID().slice(0, 8);
    const clickIds = await Promise.all(
      Array.from(
        { length: 20 },
        async () => (await click({ affiliate_url: url(program.active_links[0]) })).body.click_id as string,
      ),
    );
    const writesBefore = writeBatches.record_leads_at_once ?? 0;
    const leads = await Promise.all(
      clickIds.map((clickId, i) =>
        post("/api/v1/track/lead", { click_id: clickId, customer_key: `prov-${run}-${i}` }),
      ),
    );
    for (const lead of leads) {
      expect(lead).toEqual({
        status: 200,
        body: { success: true, provisional: true, message: expect.any(String) },
      });
    }
    // Read, decided and written by the database in batches of one call each (`record_leads_at_once`).
    expect((writeBatches.record_leads_at_once ?? 0) - writesBefore).toBeGreaterThan(0);
    const { rows } = await stack.sql.query(
      `select click_id, count(*) as n from affiliate_lead_events
        where provisional and customer_key like $1 group by click_id`,
      [`prov-${run}-%`],
    );
    // Sorted here, not by the database, whose collation may order mixed-case ids otherwise.
    const written = (rows as { click_id: string; n: string }[]).sort((a, b) =>
      a.click_id < b.click_id ? -1 : 1,
    );
    expect(written).toEqual([...clickIds].sort().map((clickId) => ({ click_id: clickId, n: "1" })));
  });
});

/** Every partner's balance in the demo program is the sum of its ledger. */
async function expectBalancesMatchLedger() {
  const { rows } = await stack.sql.query(
    `select b.partner_id, b.balance_cents,
            (select coalesce(sum(l.amount_cents), 0) from balance_ledger l
              where l.program_id = b.program_id and l.partner_id = b.partner_id and l.currency = b.currency) as ledger
       from partner_balances b where b.program_id = $1`,
    [program.program_id],
  );
  expect(rows.length).toBeGreaterThan(0);
  for (const row of rows) expect(row.balance_cents, `partner ${row.partner_id}`).toBe(row.ledger);
}

const apiKey = () => ({ Authorization: `Bearer ${program.api_key}` });

const sale = (body: Record<string, unknown>) => post("/api/v1/track/sale", body, apiKey());
const refund = (body: Record<string, unknown>) => post("/api/v1/track/refund", body, apiKey());

/** `n` sales of 10,000 cents, each on a click of its own (each its customer's first: a commission each). */
async function salesOnNewClicks(run: string, n: number): Promise<string[]> {
  const transactions = Array.from({ length: n }, (_, i) => `writes-${run}-${i}`);
  for (const transaction_id of transactions) {
    const clickId = (await click({ affiliate_url: url(program.active_links[0]) })).body.click_id as string;
    const recorded = await sale({ transaction_id, amount_cents: 10_000, click_id: clickId });
    expect(recorded.status).toBe(200);
  }
  return transactions;
}

async function refundsOf(transactionId: string) {
  const { rows } = await stack.sql.query(
    `select r.refund_id, r.amount_cents, s.refunded_cents from refunds r
       join affiliate_sale_events s on s.id = r.sale_id where s.processor_event_id = $1 order by r.id`,
    [transactionId],
  );
  return rows;
}

const salesOf = async (transactionId: string) =>
  (
    await stack.sql.query("select id from affiliate_sale_events where processor_event_id = $1", [
      transactionId,
    ])
  ).rows;

const internalError = (message: string) => ({
  data: null,
  error: { status: 500, name: "InternalServerError", message, details: {}, code: "internal_error" },
});

describe("writes of sales and refunds arriving together (record_sales_at_once, record_refunds_at_once; local stack)", () => {
  it("the same sale sent eight times at once: one recorded, seven answered 409 with its id, one row", async () => {
    const run = crypto.randomUUID().slice(0, 8);
    const clickId = (await click({ affiliate_url: url(program.active_links[0]) })).body.click_id as string;
    const body = { transaction_id: `same-${run}`, amount_cents: 2_500, click_id: clickId };
    // Whether the duplicates' writes meet in a batch or each finds the sale already there depends on timing;
    // either way the answers are the same (a conflict inside a batch: the refunds of one sale, below).
    const answers = await Promise.all(Array.from({ length: 8 }, () => sale(body)));
    const recorded = answers.filter((a) => a.status === 200);
    expect(recorded).toHaveLength(1);
    const saleId = recorded[0]?.body.sale_id;
    for (const answer of answers.filter((a) => a.status !== 200)) {
      expect(answer).toEqual({
        status: 409,
        body: {
          data: null,
          error: {
            status: 409,
            name: "ConflictError",
            message: "Duplicate transaction_id. This sale has already been recorded.",
            details: { sale_id: saleId },
            code: "duplicate_transaction",
          },
        },
      });
    }
    expect(await salesOf(body.transaction_id)).toHaveLength(1);
  });

  it("the same refund_id eight times at once: applied once, skipped seven times; ten refunds of one sale all add up", async () => {
    const run = crypto.randomUUID().slice(0, 8);
    const [transactionId] = await salesOnNewClicks(run, 1);
    const before = writeBatches.record_refunds_at_once ?? 0;
    const same = { transaction_id: transactionId, refund_amount_cents: 1_000, refund_id: `same-${run}` };
    const answers = await Promise.all(Array.from({ length: 8 }, () => refund(same)));
    expect(answers.map((a) => a.status)).toEqual(answers.map(() => 200));
    const statuses = answers.map((a) => a.body.status).sort();
    expect(statuses).toEqual(["refunded", ...Array.from({ length: 7 }, () => "skipped")]);

    const each = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        refund({ transaction_id: transactionId, refund_amount_cents: 100, refund_id: `each-${run}-${i}` }),
      ),
    );
    // Refunds of one sale in one batch: each reads the sale as the items before it left it, in the database,
    // and applies; one that fails its guard all the same (a refund outside the batch) is rolled back alone and
    // read, decided and written the usual way, as when sent alone.
    expect(each.map((a) => [a.status, a.body.status])).toEqual(each.map(() => [200, "refunded"]));
    const rows = await refundsOf(transactionId as string);
    expect(rows).toHaveLength(11);
    expect(rows[0]?.refunded_cents).toBe("2000");
    expect(writeBatches.record_refunds_at_once ?? 0).toBeGreaterThan(before);
    await expectBalancesMatchLedger();
  });

  it("repeats by amount at once, in batches: an amount applied under a refund_id is skipped, a new one applied once", async () => {
    const run = crypto.randomUUID().slice(0, 8);
    const [transactionId] = await salesOnNewClicks(run, 1);
    // A key of its own: the refunds here would take the program key past its 120 a minute, which the later
    // tests share.
    const ownKey = await issueApiKey(false);
    await stack.sql.query(
      "insert into program_api_keys (program_id, key_hash, key_prefix, is_test) values ($1, $2, $3, false)",
      [program.program_id, ownKey.keyHash, ownKey.keyPrefix],
    );
    const refundWithOwnKey = (body: Record<string, unknown>) =>
      post("/api/v1/track/refund", body, { Authorization: `Bearer ${ownKey.key}` });
    const keyed = { transaction_id: transactionId, refund_amount_cents: 700, refund_id: `keyed-${run}` };
    expect((await refundWithOwnKey(keyed)).body).toMatchObject({ status: "refunded" });
    const batchesBefore = writeBatches.record_refunds_at_once ?? 0;
    const byKeyedAmount = { transaction_id: transactionId, refund_amount_cents: 700 };
    const byNewAmount = { transaction_id: transactionId, refund_amount_cents: 300 };
    const answers = await Promise.all(
      Array.from({ length: 16 }, (_, i) => refundWithOwnKey(i % 2 === 0 ? byKeyedAmount : byNewAmount)),
    );
    expect(answers.map((a) => a.status)).toEqual(answers.map(() => 200));
    const statuses = (amount: number) =>
      answers
        .filter((_, i) => (i % 2 === 0 ? 700 : 300) === amount)
        .map((a) => a.body.status)
        .sort();
    expect(statuses(700)).toEqual(Array.from({ length: 8 }, () => "skipped"));
    expect(statuses(300)).toEqual(["refunded", ...Array.from({ length: 7 }, () => "skipped")]);
    for (const skipped of answers.filter((a) => a.body.status === "skipped")) {
      expect(skipped.body.reason).toBe("duplicate refund (same amount) ignored");
    }
    const rows = await refundsOf(transactionId as string);
    expect(rows.map((r) => r.amount_cents)).toEqual(["700", "300"]);
    expect(rows[0]?.refunded_cents).toBe("1000");
    expect(writeBatches.record_refunds_at_once ?? 0).toBeGreaterThan(batchesBefore);
    await expectBalancesMatchLedger();
  });

  it("a write the database refuses in a batch fails its own request alone; the others are written", async () => {
    const run = crypto.randomUUID().slice(0, 8);
    const transactions = await salesOnNewClicks(run, 10);
    // The partner's notification of one refund is refused (a trigger), as a value the database cannot take.
    const refused = `refuse-${run}`;
    await stack.sql.query(
      `create function refuse_${run}() returns trigger language plpgsql as $$ begin
         if new.payload->>'reason' = '${refused}' then raise exception 'notification refused'; end if;
         return new; end $$`,
    );
    await stack.sql.query(
      `create trigger refuse_${run} before insert on notifications for each row execute function refuse_${run}()`,
    );
    const before = writeBatches.record_refunds_at_once ?? 0;
    try {
      // The refused one last: the first refund goes alone, the rest arrive while it is on its way.
      const answers = await Promise.all(
        transactions.map((transaction_id, i) =>
          refund({
            transaction_id,
            refund_amount_cents: 500,
            refund_id: `r-${run}-${i}`,
            refund_reason: i === transactions.length - 1 ? refused : "changed their mind",
          }),
        ),
      );
      expect(writeBatches.record_refunds_at_once ?? 0).toBeGreaterThan(before);
      const last = answers.pop();
      expect(last).toEqual({ status: 500, body: internalError("Refund tracking failed") });
      expect(answers.map((a) => [a.status, a.body.status])).toEqual(answers.map(() => [200, "refunded"]));
    } finally {
      await stack.sql.query(`drop trigger refuse_${run} on notifications`);
      await stack.sql.query(`drop function refuse_${run}()`);
    }
    for (const [i, transactionId] of transactions.entries()) {
      expect(await refundsOf(transactionId), transactionId).toHaveLength(
        i === transactions.length - 1 ? 0 : 1,
      );
    }
    await expectBalancesMatchLedger();
  });

  it("a batch the database refuses whole is sent again, each write alone: every one applied once", async () => {
    const run = crypto.randomUUID().slice(0, 8);
    const transactions = await salesOnNewClicks(run, 8);
    stack.sql.faults.arm(UNSCOPED, {
      mode: "error",
      match: "record_refunds_at_once(",
      code: "40P01",
      times: 1,
    });
    const answers = await Promise.all(
      transactions.map((transaction_id, i) =>
        refund({ transaction_id, refund_amount_cents: 300, refund_id: `w-${run}-${i}` }),
      ),
    );
    const state = stack.sql.faults.clear(UNSCOPED);
    expect(state.fired).toBe(1);
    expect(answers.map((a) => [a.status, a.body.status])).toEqual(answers.map(() => [200, "refunded"]));
    for (const transactionId of transactions) expect(await refundsOf(transactionId)).toHaveLength(1);
    await expectBalancesMatchLedger();
  });

  it("a batch whose answer is lost fails its requests as a lone write's would, and writes nothing twice", async () => {
    const run = crypto.randomUUID().slice(0, 8);
    const clickIds: string[] = [];
    for (let i = 0; i < 8; i++) {
      clickIds.push((await click({ affiliate_url: url(program.active_links[1]) })).body.click_id as string);
    }
    const bodies = clickIds.map((click_id, i) => ({
      transaction_id: `lost-${run}-${i}`,
      amount_cents: 4_000,
      click_id,
    }));
    stack.sql.faults.arm(UNSCOPED, { mode: "lost", match: "record_sales_at_once(", times: 1 });
    const answers = await Promise.all(bodies.map((body) => sale(body)));
    const state = stack.sql.faults.clear(UNSCOPED);
    expect(state.fired).toBe(1);
    const failed = answers.flatMap((answer, i) => (answer.status === 200 ? [] : [i]));
    expect(failed.length).toBeGreaterThan(1);
    for (const i of failed)
      expect(answers[i]).toEqual({ status: 500, body: internalError("Sale tracking failed") });
    // The batch committed: each sale is there once, and the brand's retry of a 500 is told so (409).
    for (const body of bodies) expect(await salesOf(body.transaction_id)).toHaveLength(1);
    for (const i of failed) {
      const retried = await sale(bodies[i] as (typeof bodies)[number]);
      expect(retried.status).toBe(409);
      expect(retried.body).toMatchObject({ error: { code: "duplicate_transaction" } });
    }
    await expectBalancesMatchLedger();
  });
});
