/**
 * The group commit (`lib/db/group-commit.ts`) in the Workers runtime: clicks (`record_clicks`), and the reads
 * of leads, sales and refunds, that reach one isolate while one is on its way to the database go together, as
 * one statement. Each must be answered as it would be alone, each accepted click recorded once, and a batch
 * the database refuses must cost no click.
 *
 * On the local stack (`npm run dev`, in-process: the workers in workerd, the SQL endpoint on PGlite), not in
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

let dataDir: string;
let stack: LocalStack;
let program: DemoProgram;
/** Calls of the click's batch function and of the click's own, as the SQL endpoint received them. */
const calls = { batch: 0, alone: 0 };
/** Calls of each read's batch function. */
const readBatches: Record<string, number> = {};
let ip = 0;

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), "group-commit-stack-"));
  stack = await startLocalStack({
    dataDir,
    port: 0,
    logLevel: "error",
    onStatement: (query) => {
      if (query.startsWith("select * from record_clicks(")) calls.batch++;
      if (query.startsWith("select * from record_click_with_dimensions(")) calls.alone++;
      const read = /^select \* from (read_\w+_batch)\(/.exec(query)?.[1];
      if (read) readBatches[read] = (readBatches[read] ?? 0) + 1;
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

describe("reads of leads, sales and refunds arriving together (local stack)", () => {
  it("answers each as alone and writes each once, the reads sent in batches", async () => {
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

    for (const read of ["read_lead_facts_batch", "read_sale_facts_batch", "read_refund_facts_batch"]) {
      expect((readBatches[read] ?? 0) - (before[read] ?? 0), read).toBeGreaterThan(0);
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
  });
});
