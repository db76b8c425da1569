/**
 * `npm run plans`: shows that every lookup on the request paths is an index lookup. Starts the local stack
 * on the PostgreSQL of `DATABASE_URL` (PGlite has the same planner, but the figures that matter are
 * PostgreSQL's), records every statement the workers send while it drives click, visit, config, lead
 * (browser and server), sale (by click and by customer key), refund and the provider's checkout event (by
 * click, email and customer key), then asks PostgreSQL for each statement's plan with sequential scans
 * disabled: a `Seq Scan` still in a plan means no index can serve that lookup. Prints each statement's
 * scans and exits 1 when any table is scanned sequentially.
 *
 * A kept-plan statement (`lib/db/kept-plan.ts`) is sent as the call of its PL/pgSQL function, whose plan
 * EXPLAIN does not open: the statement the function runs (its body, numbered as the call's parameters) is
 * prepared with the function's parameter types and its generic plan explained, the plan the function runs.
 * A sequence of them (`lib/db/kept-plan-sequence.ts`) is explained as each step its call ran, with its values,
 * and a batch (`lib/db/kept-plan-batch.ts`, the clicks sent together) as its statement with each item's values;
 * a batch of reads, which runs as one statement over its items, also as that statement with the call's array.
 *
 * Sequential scans are disabled (`enable_seqscan = off`) rather than data generated: on a small database the
 * planner rightly prefers scanning a few pages, which says nothing about 10 million rows.
 *
 * `PLANS_DATA=existing` plans against the data already there instead (a database made by `npm run
 * bench:generate`, ten million clicks): nothing is added, the planner makes its own choices (sequential scans
 * allowed), and a sequential scan fails the check on any table of more than `bigTableRows` rows; the small
 * ones (the demo's programs, settings) are printed but pass, as scanning a page or two is what an index
 * would cost too. Each statement that can run again (reads, updates) also gets its server-side execution
 * time, so the same run on a small and a large database shows whether the request paths' lookups grow.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { startLocalStack } from "../dev/local-stack.ts";
import {
  keptPlanBatches,
  keptPlanProcedures,
  keptPlanSequences,
  keptPlanStatements,
  keptPlanWriteBatches,
} from "../lib/kept-plan-statements.ts";
import { signedCheckoutEvent } from "./checkout-event.ts";

const databaseUrl = process.env.DATABASE_URL;
if (!databaseUrl || !/^postgres(ql)?:\/\//i.test(databaseUrl)) {
  console.error("set DATABASE_URL to a postgres:// URL (a database holding only this project's migrations)");
  process.exit(2);
}

/** Rows added to demo program 1 (one hot program: an index that starts with `program_id` alone is no help). */
const FILL_ROWS = 50_000;
const existingData = process.env.PLANS_DATA === "existing";
/** With existing data: a sequential scan of a table this big (estimated rows) fails the check. */
const bigTableRows = 10_000;

/**
 * Tables whose rows of one program are settings its brand makes by hand, not events: all of a program's rows
 * are what a lookup by `program_id` reads, and they stay a handful however hot the program. The webhook
 * endpoints a change's webhook looks for (`enqueueWebhook`, and `webhook_enqueue` itself since 0017).
 */
const programSettingsTables = new Set(["webhook_endpoints"]);

/** The call of each kept-plan statement, and the statement its function runs. */
const keptPlanBodies = new Map(
  keptPlanStatements.map((statement) => [statement.callText(), statement.body()]),
);
/**
 * Each kept-plan body's statement (its parameter types and settings), and the one statement of each inlined
 * batch (the reads sent together, `kept-plan-batch.ts`: the plan its function runs, over the items' array).
 */
const keptPlanOf = new Map<string, { parameterTypes: readonly string[]; settings: readonly string[] }>([
  ...keptPlanStatements.map((statement) => [statement.body(), statement] as const),
  ...keptPlanBatches.flatMap((batch) => {
    const inlined = batch.inlinedStatement();
    return inlined === undefined ? [] : [[inlined, batch] as const];
  }),
]);
/**
 * The call of each sequence of kept-plan statements: its steps' bodies are explained, each with its values; and
 * of each procedure, the statements it surely runs (the sale decided at once: its read). Its writes are the
 * usual sale write's steps, run on branches its call's values do not tell: those explained here come through the
 * provider's sales below, and `test/node/kept-plan-lookups.test.ts` checks every kept-plan statement's plan.
 */
const keptPlanSequenceOf = new Map(
  [...keptPlanSequences, ...keptPlanProcedures].map((sequence) => [sequence.callText(), sequence]),
);
/** The call of each batch of one kept-plan statement: its statement is explained with each item's values. */
const keptPlanBatchOf = new Map(keptPlanBatches.map((batch) => [batch.callText(), batch]));
/** The call of each write batch: each item's sequence is explained as its call would be, step by step. */
const keptPlanWriteBatchOf = new Map(keptPlanWriteBatches.map((batch) => [batch.callText(), batch]));
/** Each distinct statement with the parameters of its first few uses (the provider's read differs by step). */
const recorded = new Map<string, (string | null)[][]>();
function record(query: string, params: (string | null)[]): void {
  const uses = recorded.get(query) ?? [];
  if (uses.length < 8) uses.push(params);
  recorded.set(query, uses);
}
const dataDir = await mkdtemp(join(tmpdir(), "affiliate-plans-"));
const stack = await startLocalStack({
  dataDir,
  port: 0,
  databaseUrl,
  onStatement: (sent, params) => {
    const sequence = keptPlanSequenceOf.get(sent);
    const batch = keptPlanBatchOf.get(sent);
    const writeBatch = keptPlanWriteBatchOf.get(sent);
    if (writeBatch) {
      for (const item of writeBatch.itemsOfCall(params)) {
        for (const step of writeBatch.sequence.stepsOfCall(item)) record(step.statement.body(), step.params);
      }
    } else if (batch) {
      for (const item of batch.itemsOfCall(params)) record(batch.statement.body(), item);
      const inlined = batch.inlinedStatement();
      if (inlined !== undefined) record(inlined, params);
    } else if (sequence) {
      for (const step of sequence.stepsOfCall(params)) record(step.statement.body(), step.params);
    } else {
      record(keptPlanBodies.get(sent) ?? sent, params);
    }
  },
});
let exitCode = 0;
try {
  const demo = stack.demo;
  const program = demo?.programs[0];
  if (!demo || !program) throw new Error("the local stack did not seed the demo");
  let ip = 0;
  const post = async (path: string, body: unknown, headers: Record<string, string> = {}) => {
    const response = await fetch(`${stack.baseUrl}${path}`, {
      method: "POST",
      headers: { "content-type": "application/json", "cf-connecting-ip": `10.9.0.${++ip}`, ...headers },
      body: typeof body === "string" ? body : JSON.stringify(body),
    });
    const json = (await response.json()) as Record<string, unknown>;
    if (response.status !== 200)
      throw new Error(`${path} answered ${response.status}: ${JSON.stringify(json)}`);
    return json;
  };
  const key = { authorization: `Bearer ${program.api_key}` };
  const run = crypto.randomUUID().slice(0, 8);
  const newClick = async () =>
    (
      await post("/api/v1/track/click", {
        affiliate_url: `https://shop.example/?aff=${program.active_links[0]}`,
      })
    ).click_id as string;

  const first = await newClick();
  // Clicks arriving together go as one statement (the click's group commit), its items explained as clicks.
  await Promise.all([newClick(), newClick(), newClick(), newClick()]);
  await post("/api/v1/track/click", {
    affiliate_url: `https://shop.example/?aff=${program.active_links[1]}`,
    click_id: first,
  });
  await post("/api/v1/track/visit", { click_id: first, url: "https://shop.example/pricing" });
  await fetch(`${stack.baseUrl}/api/v1/track/config?program_id=${program.program_id}`);
  // Browser lead (provisional), then the server's lead settling it, then sales by click and by key.
  await post("/api/v1/track/lead", {
    click_id: first,
    customer_key: `plan-${run}-a`,
    email: `a-${run}@example.com`,
  });
  await post("/api/v1/track/lead", { click_id: first, customer_key: `plan-${run}-a` }, key);
  await post(
    "/api/v1/track/sale",
    { transaction_id: `plan-${run}-1`, amount_cents: 5000, click_id: first },
    key,
  );
  await post(
    "/api/v1/track/sale",
    { transaction_id: `plan-${run}-2`, amount_cents: 5000, customer_key: `plan-${run}-a` },
    key,
  );
  await post(
    "/api/v1/track/refund",
    { transaction_id: `plan-${run}-1`, refund_amount_cents: 100, refund_id: `plan-${run}-r` },
    key,
  );
  // Reads arriving together go as one statement over their items (the reads' group commit, inlined batches).
  const together = [1, 2, 3, 4];
  const togetherClicks = await Promise.all(together.map(() => newClick()));
  await Promise.all(
    together.map((n) =>
      post("/api/v1/track/lead", { click_id: togetherClicks[n - 1], customer_key: `plan-${run}-t${n}` }, key),
    ),
  );
  await Promise.all(
    together.map((n) =>
      post(
        "/api/v1/track/sale",
        { transaction_id: `plan-${run}-t${n}`, amount_cents: 5000, customer_key: `plan-${run}-t${n}` },
        key,
      ),
    ),
  );
  await Promise.all(
    together.map((n) =>
      post(
        "/api/v1/track/refund",
        { transaction_id: `plan-${run}-t${n}`, refund_amount_cents: 100, refund_id: `plan-${run}-t${n}-r` },
        key,
      ),
    ),
  );
  // The provider's path: by click id, by the buyer's email, by a provisional lead's customer key (the lookup
  // that was a sequential scan).
  const secret = demo.stripe_webhook_secret;
  const webhook = async (n: string, metadata: Record<string, string>, email?: string) => {
    const e = signedCheckoutEvent(`${run}_${n}`, {
      accountId: program.stripe_account_id,
      secret,
      metadata,
      email,
    });
    await post("/webhooks/stripe", e.body, { "stripe-signature": e.signature });
  };
  await webhook("click", { service_click_id: await newClick() });
  const emailClick = await newClick();
  await post("/api/v1/track/lead", { click_id: emailClick, email: `b-${run}@example.com` });
  await webhook("email", {}, `b-${run}@example.com`);
  const keyClick = await newClick();
  await post("/api/v1/track/lead", { click_id: keyClick, customer_key: `plan-${run}-c` });
  await webhook("key", { service_customer_key: `plan-${run}-c` });

  if (!existingData) await fill(databaseUrl);
  exitCode = await explainAll(databaseUrl);
} catch (err) {
  console.error("query plans failed:", err);
  exitCode = 1;
} finally {
  await stack.stop();
  await rm(dataDir, { recursive: true, force: true });
}
process.exit(exitCode);

/**
 * Gives the planner tables of a realistic shape after the drive: on a near-empty database every index is as
 * cheap as any other, and the plan says nothing about which one fits. Events, customers and sales all belong to demo program 1 (a hot program); partners, links, balances and withdrawals are spread over 2,000 more programs.
 */
async function fill(url: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const n = FILL_ROWS;
    for (const statement of [
      `insert into affiliate_click_events (click_id, program_id, partner_id, link_id, affiliate_url, created_at)
       select 'fill_' || g, c.program_id, c.partner_id, c.link_id, c.affiliate_url, now() - g * interval '1 second'
       from (select * from affiliate_click_events where program_id = 1 limit 1) c, generate_series(1, ${n}) g`,
      `insert into customers (program_id, partner_id, click_id, clicked_at, customer_key, status, email_hash,
                              provider_customer_id)
       select 1, c.partner_id, 'fill_' || g, now(), 'fill_key_' || g, 'converted', md5('e' || g), 'cus_fill_' || g
       from (select * from affiliate_click_events where program_id = 1 limit 1) c, generate_series(1, ${n}) g`,
      `insert into customer_provider_ids (program_id, provider_customer_id, customer_id)
       select program_id, provider_customer_id, id from customers where click_id like 'fill_%'`,
      `insert into affiliate_lead_events (program_id, partner_id, click_id, customer_key, email_hash, provisional)
       select 1, c.partner_id, 'fill_' || g, 'fill_lead_key_' || g, md5('l' || g), g % 2 = 0
       from (select * from affiliate_click_events where program_id = 1 limit 1) c, generate_series(1, ${n}) g`,
      `insert into affiliate_sale_events (processor_event_id, program_id, partner_id, amount_cents)
       select 'fill_' || g, 1, c.partner_id, 100
       from (select * from affiliate_click_events where program_id = 1 limit 1) c, generate_series(1, ${n}) g`,
      `insert into payment_aliases (program_id, alias, payment_id, sale_id)
       select 1, 'fill_alias_' || g, 'fill_' || g, case when g % 2 = 0 then null else s.id end
       from generate_series(1, ${n}) g join affiliate_sale_events s on s.processor_event_id = 'fill_' || g`,
      `insert into stripe_pending_reversals (program_id, payment_id, event_id, kind, reversal_id, charge_amount_cents,
                                             refunded_total_cents, applied_at)
       select 1, 'fill_pi_' || g, 'fill_evt_' || g, 'refund', 're_fill_' || g, 100, 100,
              case when g % 2 = 0 then now() end
       from generate_series(1, ${n}) g`,
      // Other programs of other brands (five each), so that a lookup by program id, or of a brand's programs,
      // has a table to choose from.
      `insert into advertisers (name) select 'Fill brand ' || g from generate_series(1, 400) g`,
      await copyProgramSql(client, 2_000),
      // Partners with links, balances and withdrawals spread over those programs.
      `insert into partners (name, email) select 'Fill partner', 'fill-' || g || '@partners.example'
       from generate_series(1, ${n}) g`,
      `insert into program_partners (program_id, partner_id, status)
       select 1 + id % 2000, id, 'active' from partners where email like 'fill-%'`,
      `insert into referral_links (program_id, partner_id, short_link)
       select 1 + id % 2000, id, 'fill-link-' || id from partners where email like 'fill-%'`,
      `insert into partner_balances (program_id, partner_id, currency, balance_cents)
       select 1 + id % 2000, id, 'USD', 0 from partners where email like 'fill-%'`,
      `insert into withdrawals (program_id, partner_id, currency, amount_cents, status)
       select 1 + id % 2000, id, 'USD', 1, case when id % 10 = 0 then 'open' else 'paid' end
       from partners where email like 'fill-%'`,
      "analyze",
    ])
      await client.query(statement);
  } finally {
    await client.end();
  }
}

/**
 * `n` copies of demo program 1 (no provider account: that column is unique), spread over the "Fill brand"
 * advertisers, five programs each: a brand of thousands of programs would make finding its programs a walk.
 */
async function copyProgramSql(client: pg.Client, n: number): Promise<string> {
  const columns = await client.query<{ column_name: string }>(
    `select column_name from information_schema.columns
     where table_schema = 'public' and table_name = 'programs' and column_name not in ('id', 'stripe_account_id')`,
  );
  const names = columns.rows.map((c) => `"${c.column_name}"`);
  const values = names.map((name) =>
    name === '"advertiser_id"'
      ? `(select min(id) from advertisers where name like 'Fill brand %') + g % ${Math.ceil(n / 5)}`
      : name,
  );
  return `insert into programs (${names.join(", ")}) select ${values.join(", ")}
    from programs, generate_series(1, ${n}) g where id = 1`;
}

interface PlanNode {
  "Node Type": string;
  "Relation Name"?: string;
  "Index Name"?: string;
  "Index Cond"?: string;
  Filter?: string;
  Plans?: PlanNode[];
}

interface Scan {
  text: string;
  /** A sequential scan, or an index walked whole (no index condition): no index serves this lookup. */
  unindexed: boolean;
}

/** Each index's leading column: an index condition that does not bind it walks the whole index. */
type LeadingColumns = Map<string, string>;

async function leadingColumns(client: pg.Client): Promise<LeadingColumns> {
  const result = await client.query<{ index: string; leading: string }>(`
    select c.relname as index, a.attname as leading
    from pg_index i
    join pg_class c on c.oid = i.indexrelid
    join pg_attribute a on a.attrelid = i.indrelid and a.attnum = i.indkey[0]
    join pg_namespace n on n.oid = c.relnamespace and n.nspname = 'public'`);
  return new Map(result.rows.map((r) => [r.index, r.leading]));
}

/** The columns an index condition binds by equality (`col = ...`, `col = ANY (...)`). */
function boundColumns(cond: string): string[] {
  // `col IS NULL` binds too: a B-tree finds its null entries (the unlinked payment aliases) as a range.
  return [...cond.matchAll(/\(?([a-z_]+) (?:= |IS NULL)/g)].map((m) => m[1] ?? "");
}

/**
 * Why an index scan does not find its rows by the index, or null when it does: no condition (the index is
 * walked whole), a condition that does not bind the index's leading column (the same), or one that binds
 * only `program_id` on an events table (every row of a hot program is read to find one).
 */
function unindexedReason(
  table: string | undefined,
  index: string,
  cond: string | undefined,
  leading: LeadingColumns,
): string | null {
  if (cond === undefined) return "whole index";
  const bound = boundColumns(cond);
  const first = leading.get(index);
  if (first && !bound.includes(first)) return `leading column ${first} not bound`;
  const onlyProgram = bound.length > 0 && bound.every((c) => c === "program_id");
  if (onlyProgram && !(table && programSettingsTables.has(table))) return "only program_id bound";
  return null;
}

/** Estimated rows of each table (`pg_class.reltuples`), to tell a big table's sequential scan from a small one's. */
type TableRows = Map<string, number>;

async function tableRows(client: pg.Client): Promise<TableRows> {
  const result = await client.query<{ name: string; rows: number }>(`
    select c.relname as name, c.reltuples::float8 as rows from pg_class c
    join pg_namespace n on n.oid = c.relnamespace and n.nspname = 'public' where c.relkind = 'r'`);
  return new Map(result.rows.map((r) => [r.name, Number(r.rows)]));
}

/** The table and index reads of a plan (writes' `ModifyTable` nodes are left out). */
function scansOf(node: PlanNode, leading: LeadingColumns, rows: TableRows | null, into: Scan[]): Scan[] {
  const type = node["Node Type"];
  const relation = node["Relation Name"];
  const table = relation ? `${relation}: ` : "";
  if (type === "Seq Scan") {
    // Without `rows` (seq scans disabled) any sequential scan means no index serves the lookup.
    const size = rows && relation ? (rows.get(relation) ?? 0) : null;
    const big = size === null || size > bigTableRows;
    into.push({
      text: `${table}Seq Scan${size === null ? "" : ` (about ${Math.max(0, Math.round(size))} rows)`}${big && size !== null ? "  <-- big table" : ""}`,
      unindexed: big,
    });
  } else if (node["Index Name"]) {
    const cond = node["Index Cond"];
    const found = unindexedReason(relation, node["Index Name"], cond, leading);
    // With existing data, walking a small table's index whole is as cheap as a lookup (like its Seq Scan).
    const size = rows && relation ? (rows.get(relation) ?? 0) : null;
    const reason = found && (size === null || size > bigTableRows) ? found : null;
    const filter = node.Filter ? ` filter ${node.Filter}` : "";
    const note = reason ? `  <-- ${reason}` : found ? `  (${found}: small table)` : "";
    into.push({
      text: `${table}${type} using ${node["Index Name"]} on ${cond ?? "(whole index)"}${filter}${note}`,
      unindexed: reason !== null,
    });
  }
  for (const child of node.Plans ?? []) scansOf(child, leading, rows, into);
  return into;
}

/** The scans of one statement's plan, with sequential scans disabled, inside a transaction rolled back. */
async function planScans(
  client: pg.Client,
  leading: LeadingColumns,
  rows: TableRows | null,
  query: string,
  params: (string | null)[],
): Promise<Scan[]> {
  await client.query("begin");
  try {
    if (!rows) await client.query("set local enable_seqscan = off");
    const result = await explain(client, "format json", query, params);
    const plan = (result.rows[0] as { "QUERY PLAN": { Plan: PlanNode }[] })["QUERY PLAN"][0]?.Plan;
    return plan ? scansOf(plan, leading, rows, []) : [];
  } finally {
    await client.query("rollback");
  }
}

/**
 * EXPLAIN of a recorded statement, inside the caller's transaction. A kept-plan body is prepared with its
 * function's parameter types and settings and explained as the generic plan its function runs (the values inlined as
 * literals: EXECUTE's arguments cannot be the protocol's parameters).
 */
async function explain(client: pg.Client, options: string, query: string, params: (string | null)[]) {
  const kept = keptPlanOf.get(query);
  if (!kept) return client.query(`explain (${options}) ${query}`, params);
  // The function's own settings: generic plans, and no sequential scan where an index can serve.
  for (const setting of kept.settings) await client.query(`set local ${setting}`);
  // A statement that failed when run (a timed run that broke a guard) left its transaction aborted, and the
  // deallocation below with it: the prepared statement outlived the rollback.
  await client.query("deallocate all");
  await client.query(`prepare kept_plan_body (${kept.parameterTypes.join(", ")}) as ${query}`);
  try {
    const values = params.map((value) => (value === null ? "null" : client.escapeLiteral(value)));
    return await client.query(`explain (${options}) execute kept_plan_body (${values.join(", ")})`);
  } finally {
    // A prepared statement outlives the transaction's rollback.
    await client.query("deallocate kept_plan_body").catch(() => undefined);
  }
}

async function explainAll(url: string): Promise<number> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  let unindexed = 0;
  const timed: number[] = [];
  try {
    const leading = await leadingColumns(client);
    const rows = existingData ? await tableRows(client) : null;
    console.log(
      `${recorded.size} distinct statements on the request paths` +
        (rows
          ? ` (existing data: ${Math.round(rows.get("affiliate_click_events") ?? 0)} clicks; the planner's own choices)\n`
          : "\n"),
    );
    for (const [query, uses] of recorded) {
      const scans: Scan[] = [];
      for (const params of uses) scans.push(...(await planScans(client, leading, rows, query, params)));
      const bad = new Set(scans.filter((scan) => scan.unindexed).map((scan) => scan.text));
      unindexed += bad.size;
      const head = query.replace(/\s+/g, " ").trim().slice(0, 110);
      const ms = rows ? await executionMs(client, query, uses[0] ?? []) : null;
      if (ms !== null) timed.push(ms);
      const time = ms === null ? "" : ` [${ms.toFixed(3)} ms]`;
      console.log(`${bad.size > 0 ? "UNINDEXED" : "ok       "} ${head}${time}`);
      for (const scan of new Set(scans.map((x) => x.text))) console.log(`            ${scan}`);
    }
  } finally {
    await client.end();
  }
  if (timed.length > 0) {
    const total = timed.reduce((a, b) => a + b, 0);
    console.log(
      `\nserver-side execution time of the ${timed.length} statements that can run again (median of 5 each): ` +
        `${total.toFixed(2)} ms in all, slowest ${Math.max(...timed).toFixed(3)} ms`,
    );
  }
  console.log(unindexed === 0 ? "\nevery lookup uses an index" : `\n${unindexed} unindexed scan(s)`);
  return unindexed === 0 ? 0 : 1;
}

/**
 * With existing data: the statement's execution time on the server (`EXPLAIN ANALYZE`, median of five, each
 * in a transaction rolled back), or null when it cannot run again (an insert of a row that now exists).
 */
async function executionMs(
  client: pg.Client,
  query: string,
  params: (string | null)[],
): Promise<number | null> {
  const times: number[] = [];
  for (let i = 0; i < 5; i++) {
    await client.query("begin");
    try {
      const result = await explain(client, "analyze, format json", query, params);
      times.push(
        Number(
          (result.rows[0] as { "QUERY PLAN": { "Execution Time": number }[] })["QUERY PLAN"][0]?.[
            "Execution Time"
          ],
        ),
      );
    } catch {
      return null;
    } finally {
      await client.query("rollback");
    }
  }
  times.sort((a, b) => a - b);
  return times[2] ?? null;
}
