/**
 * `npm run bench [-- <scenario>...]`: starts the local stack in-process (PGlite in a temp folder, or the
 * PostgreSQL of DATABASE_URL; demo seed; one Miniflare instance on a free loopback port), drives each
 * scenario with autocannon for a bounded time right after its floor (one or two `select 1` round trips,
 * bench/floor-worker.ts), prints the figures and the ratios, stops everything and removes the temp folder.
 *
 * Environment: BENCH_SECONDS (default 10), BENCH_CONNECTIONS (default 10), BENCH_ROUNDS (default 3: each
 * scenario and its floor measured that many times, alternating, and the round of the median ratio reported),
 * DATABASE_URL (optional).
 *
 * `--profile` (`npm run bench:profile`) also takes a CPU profile of the worker serving each scenario in
 * workerd over its measured run (bench/cpu-profile.ts), prints its self time per module and per function, and
 * writes it to `.bench-profiles/<scenario>.cpuprofile` (open in any Chromium DevTools, Performance panel).
 *
 * Per-IP rate limits would refuse almost everything from one address, so every request carries its own
 * `CF-Connecting-IP`. Any status other than the scenario's expected one counts as an error (exit code 1).
 * Database round trips are HTTP requests to the local Neon-protocol endpoint, the unit Neon bills and the
 * latency budget counts.
 */
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import autocannon, { type AutocannonRequest, type AutocannonResult } from "autocannon";
import {
  type LocalStack,
  PROJECT_ROOT,
  type StackWorker,
  startLocalStack,
  WORKERS,
} from "../dev/local-stack.ts";
import type { Demo } from "../dev/seed.ts";
import { issueApiKey } from "../lib/auth/api-keys.ts";
import { signedCheckoutEvent } from "./checkout-event.ts";
import { type CpuProfiler, connectProfiler, selfTimeTable, summariseProfile } from "./cpu-profile.ts";
import { type CpuSplit, cpuPerRequest, cpuSnapshot } from "./process-cpu.ts";
import { ResponseLog, type StallSummary } from "./stalls.ts";

interface ScenarioContext {
  demo: Demo;
  /**
   * Extra live API keys of demo program 1, so per-key limits (120/min for sale and refund, 30/min for
   * readiness and analytics) do not cap the load.
   */
  apiKeys: string[];
  /** Click ids of demo program 1, made before the run, for attributed sales. */
  clickIds: string[];
  /** Unique per run, so transaction ids never repeat across runs against the same database. */
  runId: string;
  /**
   * For the refund scenario: transaction ids of attributed sales of demo program 1, each with an approved
   * (credited) commission, made through the API before the run. Empty when that scenario is not selected.
   */
  refundableTransactionIds: string[];
  /**
   * For the lead-server scenario: clicks of demo program 1 no lead has named yet, one per request, and how
   * many of them the scenario has used. Empty when that scenario is not selected.
   */
  freshClickIds: string[];
  freshClicksUsed: number;
}

/** One endpoint under load. `n` numbers the requests of a run (unique per request). */
interface Scenario {
  name: string;
  /** The floor scenario this one is compared with (the same number of database round trips, or fewer). */
  floor?: string;
  method: "GET" | "POST";
  path: string;
  /**
   * Writes the queue consumer makes after the response (notifications), per request: the run waits for
   * them before reading the database figures, which then show the request's own round trips and these.
   */
  afterResponseWrites?: number;
  expectedStatus: number;
  body?: (context: ScenarioContext, n: number) => unknown;
  /** A body sent as is, with its own headers (a signed provider event). */
  rawBody?: (context: ScenarioContext, n: number) => { body: string; headers: Record<string, string> };
  headers?: (context: ScenarioContext, n: number) => Record<string, string>;
  /**
   * Reads the analytics rollups: the every-minute cron runs once before it, as in production it keeps them
   * (without it, every event the earlier scenarios wrote would be read raw).
   */
  afterMinuteCron?: boolean;
}

const SCENARIOS: readonly Scenario[] = [
  {
    // The floors (bench/floor-worker.ts): the same middleware and rate limiter as click, then one or two
    // `select 1` round trips through the same driver, and nothing else.
    name: "floor-1",
    method: "POST",
    path: "/api/bench/floor-1",
    expectedStatus: 200,
    body: () => ({}),
  },
  {
    name: "floor-2",
    method: "POST",
    path: "/api/bench/floor-2",
    expectedStatus: 200,
    body: () => ({}),
  },
  {
    name: "click",
    floor: "floor-1",
    method: "POST",
    path: "/api/v1/track/click",
    expectedStatus: 200,
    body: ({ demo }, n) => {
      const links = demo.programs.flatMap((program) => program.active_links);
      return { affiliate_url: `https://shop.example/landing?aff=${links[n % links.length]}` };
    },
  },
  {
    // A browser-mode lead on demo program 1 (`server_required`), answered provisional: the lead's full
    // read + write path, repeatable on the same clicks (a provisional lead creates no customer). It runs
    // before the sale scenario, whose sales turn those clicks' customers into `converted`.
    name: "lead",
    floor: "floor-2",
    method: "POST",
    path: "/api/v1/track/lead",
    expectedStatus: 200,
    body: ({ clickIds }, n) => ({ click_id: clickIds[n % clickIds.length] }),
  },
  {
    // A server lead (the program's key) on a click no lead has named, with a new customer key: the
    // customer is created with status `lead` and the event written with its webhook, in one write.
    name: "lead-server",
    floor: "floor-2",
    method: "POST",
    path: "/api/v1/track/lead",
    expectedStatus: 200,
    body: (context, n) => ({
      click_id: context.freshClickIds[context.freshClicksUsed++],
      customer_key: `bench-${context.runId}-lead-${n}`,
    }),
    headers: ({ apiKeys }, n) => ({ authorization: `Bearer ${apiKeys[n % apiKeys.length]}` }),
  },
  {
    // An attributed sale on the demo's recurring-free percent program: each click's first sale pays a
    // commission, later ones are recorded without (one-time type); both take the same read + write path.
    name: "sale",
    floor: "floor-2",
    method: "POST",
    path: "/api/v1/track/sale",
    expectedStatus: 200,
    body: ({ clickIds, runId }, n) => ({
      transaction_id: `bench-${runId}-${n}`,
      amount_cents: 4900,
      click_id: clickIds[n % clickIds.length],
    }),
    headers: ({ apiKeys }, n) => ({ authorization: `Bearer ${apiKeys[n % apiKeys.length]}` }),
  },
  {
    // A small partial refund with a unique refund_id, spread round-robin over the prepared sales: each one
    // applies (proportional deduction from the partner balance, ledger row, withdrawals fitted) in one read
    // and one write round trip. Sales are large enough that no run refunds one fully.
    name: "refund",
    floor: "floor-2",
    method: "POST",
    path: "/api/v1/track/refund",
    expectedStatus: 200,
    body: ({ refundableTransactionIds, runId }, n) => ({
      transaction_id: refundableTransactionIds[n % refundableTransactionIds.length],
      refund_amount_cents: 1 + (n % 7),
      refund_id: `bench-${runId}-refund-${n}`,
    }),
    headers: ({ apiKeys }, n) => ({ authorization: `Bearer ${apiKeys[n % apiKeys.length]}` }),
  },
  {
    // Readiness of demo program 1 (its events by now): one read round trip, like click; limited to 30 per
    // minute per key, so the requests rotate over the prepared keys.
    name: "readiness",
    floor: "floor-1",
    afterMinuteCron: true,
    method: "GET",
    path: "/api/v1/programs/me/readiness",
    expectedStatus: 200,
    headers: ({ apiKeys }, n) => ({ authorization: `Bearer ${apiKeys[n % apiKeys.length]}` }),
  },
  {
    // Analytics by utm_source over the last 30 days for demo program 1: two round trips (rollups, then the
    // raw edges of the range), hence the two-round-trip floor.
    name: "analytics",
    floor: "floor-2",
    afterMinuteCron: true,
    method: "GET",
    path: "/api/v1/programs/me/analytics/sources?group_by=utm_source&interval=last_30_days",
    expectedStatus: 200,
    headers: ({ apiKeys }, n) => ({ authorization: `Bearer ${apiKeys[n % apiKeys.length]}` }),
  },
  {
    // The provider's signed `checkout.session.completed` of demo program 1's connected account, attributed by
    // its metadata click id: claim, read, write, kept reversals and completion (5 round trips; its floor has 2).
    name: "checkout",
    floor: "floor-2",
    method: "POST",
    path: "/webhooks/stripe",
    expectedStatus: 200,
    rawBody: ({ demo, clickIds, runId }, n) => {
      const program = demo.programs[0];
      if (!program) throw new Error("the demo has no program");
      const event = signedCheckoutEvent(`${runId}_${n}`, {
        accountId: program.stripe_account_id,
        secret: demo.stripe_webhook_secret,
        metadata: { service_click_id: clickIds[n % clickIds.length] ?? "" },
      });
      return { body: event.body, headers: { "stripe-signature": event.signature } };
    },
  },
];

/**
 * Prepared API keys: at 30 requests per minute per key (readiness, analytics), 4,000 keys carry 2,000
 * requests/s for the minute a scenario lasts.
 */
const API_KEYS = 4000;

/** Sales the refund scenario spreads over, and the amount of each (cents). */
const REFUNDABLE_SALES = 300;
const REFUNDABLE_SALE_CENTS = 10_000_000;

/**
 * Enough keys for the sale and refund scenarios' per-key limit, clicks to attribute sales to and, when the
 * refund scenario runs, the sales it refunds.
 */
async function prepareContext(
  target: LocalStack,
  demo: Demo,
  withRefundableSales: boolean,
  freshClicks: number,
): Promise<ScenarioContext> {
  const program = demo.programs[0];
  if (!program) throw new Error("the demo has no program");
  const apiKeys: string[] = [];
  for (let batch = 0; batch < API_KEYS / 200; batch++) {
    const issued = await Promise.all(Array.from({ length: 200 }, () => issueApiKey(false)));
    const rows = issued.map((_, i) => `($1, $${2 * i + 2}, $${2 * i + 3}, false)`).join(", ");
    await target.sql.query(
      `insert into program_api_keys (program_id, key_hash, key_prefix, is_test) values ${rows}`,
      [program.program_id, ...issued.flatMap((key) => [key.keyHash, key.keyPrefix])],
    );
    apiKeys.push(...issued.map((key) => key.key));
  }
  const clickIds: string[] = [];
  for (let i = 0; i < 50; i++) {
    const response = await fetch(`${target.baseUrl}/api/v1/track/click`, {
      method: "POST",
      headers: { "content-type": "application/json", "cf-connecting-ip": freshIp() },
      body: JSON.stringify({ affiliate_url: `https://shop.example/?aff=${program.active_links[i % 2]}` }),
    });
    clickIds.push(((await response.json()) as { click_id: string }).click_id);
  }
  const runId = crypto.randomUUID().slice(0, 8);
  const refundableTransactionIds = withRefundableSales
    ? await prepareRefundableSales(target, program.active_links, apiKeys, runId)
    : [];
  const freshClickIds = await prepareFreshClicks(target, program.program_id, runId, freshClicks);
  return { demo, apiKeys, clickIds, runId, refundableTransactionIds, freshClickIds, freshClicksUsed: 0 };
}

/** Clicks of the program's first active link, written directly (the click route is not what is measured). */
async function prepareFreshClicks(
  target: LocalStack,
  programId: number,
  runId: string,
  count: number,
): Promise<string[]> {
  if (count === 0) return [];
  const prefix = `bench-${runId}-fresh-`;
  await target.sql.query(
    `insert into affiliate_click_events (click_id, program_id, partner_id, link_id, affiliate_url, created_at)
     select $2 || g, l.program_id, l.partner_id, l.id, 'https://shop.example/?aff=' || l.short_link, now()
     from generate_series(1, $3::int) g,
          (select * from referral_links where program_id = $1 and is_active order by id limit 1) l`,
    [programId, prefix, count],
  );
  return Array.from({ length: count }, (_, i) => `${prefix}${i + 1}`);
}

/**
 * Sales to refund, through the API: one new click per sale, so each is its customer's first and carries
 * the one-time commission of demo program 1 (no hold: approved and credited at once).
 */
async function prepareRefundableSales(
  target: LocalStack,
  links: readonly string[],
  apiKeys: readonly string[],
  runId: string,
): Promise<string[]> {
  const started = Date.now();
  const post = async (path: string, body: unknown, key?: string) => {
    const response = await fetch(`${target.baseUrl}${path}`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        "cf-connecting-ip": freshIp(),
        ...(key ? { authorization: `Bearer ${key}` } : {}),
      },
      body: JSON.stringify(body),
    });
    const json = (await response.json()) as Record<string, unknown>;
    if (response.status !== 200)
      throw new Error(`${path} answered ${response.status}: ${JSON.stringify(json)}`);
    return json;
  };
  const transactionIds: string[] = [];
  for (let start = 0; start < REFUNDABLE_SALES; start += 20) {
    const batch = Array.from({ length: Math.min(20, REFUNDABLE_SALES - start) }, (_, j) => start + j);
    const made = await Promise.all(
      batch.map(async (i) => {
        const click = await post("/api/v1/track/click", {
          affiliate_url: `https://shop.example/?aff=${links[i % links.length]}`,
        });
        const transactionId = `bench-${runId}-refundable-${i}`;
        const sale = await post(
          "/api/v1/track/sale",
          { transaction_id: transactionId, amount_cents: REFUNDABLE_SALE_CENTS, click_id: click.click_id },
          apiKeys[i % apiKeys.length],
        );
        if (typeof sale.commission_id !== "number")
          throw new Error(`sale without commission: ${transactionId}`);
        return transactionId;
      }),
    );
    transactionIds.push(...made);
  }
  console.log(
    `prepared ${transactionIds.length} sales to refund in ${((Date.now() - started) / 1000).toFixed(1)} s\n`,
  );
  return transactionIds;
}

interface Figures {
  scenario: string;
  seconds: number;
  requests: number;
  requestsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  non2xx: number;
  errors: number;
  statusCodes: Record<string, number>;
  dbRoundTripsPerRequest: number;
  dbStatementsPerRequest: number;
  /** Of the round trips per request, those made after the response by the queue consumer. */
  afterResponseRoundTripsPerRequest: number;
  /** CPU milliseconds per request by part of the stack (bench/process-cpu.ts); absent without `/proc`. */
  cpuMsPerRequest?: CpuSplit;
  /** The responses above 3x p50, and how many of them ended together with most of the others in flight. */
  stalls: StallSummary;
}

const seconds = positiveNumber("BENCH_SECONDS", 10);
const connections = positiveNumber("BENCH_CONNECTIONS", 10);
const rounds = positiveInteger("BENCH_ROUNDS", 3);
const profiling = process.argv.includes("--profile");
const selected = process.argv.slice(2).filter((arg) => arg !== "--profile");
// By default every endpoint, each after its own floor (floors alone only when named).
const scenarios = SCENARIOS.filter((s) => (selected.length > 0 ? selected.includes(s.name) : s.floor));
if (scenarios.length === 0) {
  console.error(
    `unknown scenario(s) ${selected.join(", ")}; known: ${SCENARIOS.map((s) => s.name).join(", ")}`,
  );
  process.exit(2);
}

let ipCounter = 0;
/** Numbers every request of the whole run (warm-up included), so generated ids never repeat. */
let requestCounter = 0;
/** A fresh client address per request, 10.0.0.1 upwards (16 million before wrapping). */
function freshIp(): string {
  const n = (ipCounter++ % 0xfffffe) + 1;
  return `10.${(n >> 16) & 255}.${(n >> 8) & 255}.${n & 255}`;
}

let stack: LocalStack | undefined;
let dataDir: string | undefined;
let running: ReturnType<typeof autocannon> | undefined;
/** With `--profile`: one CPU profiler per worker of the stack, by worker name. */
const profilers = new Map<string, CpuProfiler>();

async function cleanUp(): Promise<void> {
  running?.stop();
  for (const profiler of profilers.values()) profiler.close();
  await stack?.stop();
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
}

for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.once(signal, () => {
    console.error(`\n${signal}: stopping the benchmark`);
    void cleanUp().finally(() => process.exit(130));
  });
}

let exitCode = 0;
try {
  dataDir = await mkdtemp(join(tmpdir(), "affiliate-bench-"));
  const started = Date.now();
  const inspectorPort = profiling ? await freePort() : undefined;
  const benchTrackingConfig = await benchConfig(dataDir, "wrangler.tracking.toml", "bench/floor-worker.ts");
  stack = await startLocalStack({
    ...(inspectorPort === undefined ? {} : { inspectorPort }),
    dataDir,
    port: 0,
    watch: false,
    logLevel: "warn",
    ...(process.env.DATABASE_URL ? { databaseUrl: process.env.DATABASE_URL } : {}),
    // The tracking worker's entry is the bench's (its routes plus the floors), routed the floors' path too.
    workers: WORKERS.map((entry) =>
      entry.config === "wrangler.tracking.toml"
        ? { config: benchTrackingConfig, routes: [...(entry.routes ?? []), "*/api/bench/*"] }
        : entry,
    ),
  });
  const demo = stack.demo;
  if (!demo) throw new Error("the local stack did not seed the demo");
  if (inspectorPort !== undefined)
    for (const worker of stack.workers)
      profilers.set(worker.name, await connectProfiler(inspectorPort, worker.name));
  console.log(
    `local stack on ${stack.baseUrl} (${stack.sql.backend}) in ${((Date.now() - started) / 1000).toFixed(1)} s; ` +
      `${seconds} s per scenario, ${connections} connections\n`,
  );

  const context = await prepareContext(
    stack,
    demo,
    scenarios.some((s) => s.name === "refund"),
    // Above any rate this machine reaches, for each round's warm-up and measured run.
    scenarios.some((s) => s.name === "lead-server") ? (seconds + 5) * 3_000 * rounds : 0,
  );
  const results: Figures[] = [];
  // Each scenario is measured right after its own floor: on a machine shared with other work the load drifts
  // over a run, and a floor measured minutes earlier would make the ratio measure the drift. The pair runs
  // `rounds` times in a row, so one burst of other work moves one round, not the reported ratio.
  const runs = scenarios.flatMap((scenario) => {
    const floor = SCENARIOS.find((s) => s.name === scenario.floor);
    return Array.from({ length: rounds }, (_, i) => [
      ...(floor ? [{ ...floor, name: runName(`${floor.name} (${scenario.name})`, i) }] : []),
      { ...scenario, name: runName(scenario.name, i) },
    ]).flat();
  });
  for (const scenario of runs) {
    if (scenario.afterMinuteCron) await stack.triggerScheduled(undefined, "* * * * *");
    // Warm-up (JIT, connection pools, the isolate's first database client), not measured.
    await load(stack.baseUrl, scenario, context, { amount: connections * 20 });
    // The planner's statistics, as autovacuum keeps them in production (a local server may run without it),
    // once the warm-up has written the scenario's first rows. On statistics of empty tables readiness's
    // newest-first reads sorted every event of the program instead of walking the index backwards (readiness
    // 39 requests/s, p50 249 ms, on a bench database never analyzed), and the sale's ids link looked its ids
    // up among every id of the namespace; a kept plan made then stays until `analyze` changes the statistics.
    if (!scenario.name.startsWith("floor")) await stack.sql.query("analyze");
    await settle(scenario.afterResponseWrites ? 3000 : 250);
    stack.sql.resetStats();
    const served = servingWorker(stack, scenario.path);
    const profiler = profilers.get(served.name);
    await profiler?.start();
    const cpuBefore = cpuSnapshot(stack.sql.backend === "postgres");
    const responses = new ResponseLog();
    const result = await load(stack.baseUrl, scenario, context, { duration: seconds }, responses);
    // In-flight requests cut off at the deadline may still finish their queries; the notifications queue
    // delivers its last batch up to max_batch_timeout (2 s) later.
    await settle(scenario.afterResponseWrites ? 3000 : 250);
    const cpu = cpuPerRequest(
      cpuBefore,
      cpuSnapshot(stack.sql.backend === "postgres"),
      result.requests.total,
    );
    const profile = await profiler?.stop();
    const db = stack.sql.stats();
    const stalls = responses.summary(connections);
    const figures = {
      ...summarise(scenario, result, db),
      ...(cpu ? { cpuMsPerRequest: cpu } : {}),
      // To a tenth of a ms in the JSON line: what the timer tells apart, not its float noise.
      stalls: {
        ...stalls,
        boundMs: round(stalls.boundMs, 1),
        longestStallMs: round(stalls.longestStallMs, 1),
      },
    };
    results.push(figures);
    print(figures, stack.sql.backend);
    if (profile) await reportProfile(scenario.name, profile, served, figures.requests);
    if (figures.errors > 0) exitCode = 1;
  }
  printRatios(results);
  printCpu(results, stack.sql.backend);
  console.log(`\n${JSON.stringify(results)}`);
} catch (err) {
  console.error("benchmark failed:", err);
  exitCode = 1;
} finally {
  await cleanUp();
}
process.exit(exitCode);

function load(
  baseUrl: string,
  scenario: Scenario,
  context: ScenarioContext,
  bound: { duration: number } | { amount: number },
  responses?: ResponseLog,
): Promise<AutocannonResult> {
  const request: AutocannonRequest = {
    method: scenario.method,
    path: scenario.path,
    setupRequest: (req) => {
      const i = requestCounter++;
      const raw = scenario.rawBody?.(context, i);
      const body = raw ? raw.body : scenario.body ? JSON.stringify(scenario.body(context, i)) : undefined;
      return {
        ...req,
        headers: {
          ...(body === undefined ? {} : { "content-type": "application/json" }),
          ...scenario.headers?.(context, i),
          ...raw?.headers,
          "cf-connecting-ip": freshIp(),
        },
        ...(body === undefined ? {} : { body }),
      };
    },
  };
  return new Promise((resolve, reject) => {
    running = autocannon(
      { url: baseUrl, connections, timeout: 10, requests: [request], ...bound },
      (err, result) => {
        running = undefined;
        if (err) reject(err);
        else resolve(result);
      },
    );
    if (responses)
      running.on("response", (_client, _status, _bytes, latencyMs) => responses.record(latencyMs));
  });
}

function summarise(
  scenario: Scenario,
  result: AutocannonResult,
  db: { requests: number; statements: number },
): Omit<Figures, "stalls"> {
  const statusCodes = Object.fromEntries(
    Object.entries(result.statusCodeStats).map(([code, { count }]) => [code, Number(count)]),
  );
  const total = result.requests.total;
  const expected = statusCodes[String(scenario.expectedStatus)] ?? 0;
  const perRequest = (value: number) => (total > 0 ? round(value / total, 2) : 0);
  return {
    scenario: scenario.name,
    seconds: result.duration,
    requests: total,
    requestsPerSecond: round(total / result.duration, 1),
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
    non2xx: result.non2xx,
    // Unexpected statuses plus connection errors and timeouts.
    errors: total - expected + result.errors,
    statusCodes,
    dbRoundTripsPerRequest: perRequest(db.requests),
    dbStatementsPerRequest: perRequest(db.statements),
    afterResponseRoundTripsPerRequest: scenario.afterResponseWrites ?? 0,
  };
}

function print(f: Figures, backend: string): void {
  const codes = Object.entries(f.statusCodes)
    .map(([code, count]) => `${code}: ${count}`)
    .join(", ");
  console.log(
    [
      `${f.scenario}: ${f.requests} requests in ${f.seconds.toFixed(1)} s`,
      `  requests/s          ${f.requestsPerSecond}`,
      `  latency p50 / p99   ${f.p50Ms} ms / ${f.p99Ms} ms`,
      `  above 3x p50        ${f.stalls.slow} requests, ${f.stalls.slowInStalls} of them in ${f.stalls.stalls} stalls ` +
        `(at least half the connections late at once; the longest held a request ${round(f.stalls.longestStallMs, 0)} ms)`,
      `  non-2xx             ${f.non2xx}`,
      `  errors              ${f.errors} (status codes ${codes || "none"})`,
      `  db round trips/req  ${f.dbRoundTripsPerRequest} (statements/req ${f.dbStatementsPerRequest})` +
        (f.afterResponseRoundTripsPerRequest > 0
          ? `, of which ${f.afterResponseRoundTripsPerRequest} after the response (queue consumer)`
          : ""),
      ...(f.cpuMsPerRequest
        ? [
            `  cpu ms/req          workerd ${f.cpuMsPerRequest.workerd}, node ${f.cpuMsPerRequest.node}` +
              (backend === "postgres" ? `, postgres ${f.cpuMsPerRequest.postgres}` : " (PGlite included)"),
          ]
        : []),
    ].join("\n"),
  );
}

/**
 * CPU milliseconds per request by part of the stack: steadier than requests per second on a shared machine,
 * and where each scenario's time goes. On PGlite the database is inside node. With several rounds, the runs
 * of the round each scenario's ratio reports (every round stays in the JSON line); floors run alone, every run.
 */
function printCpu(results: readonly Figures[], backend: string): void {
  const paired = medianRounds(results);
  const pairedRuns = new Set(paired.flatMap((round) => [round.name, `${round.floorName} (${round.name})`]));
  const shown = [
    ...paired.flatMap((round) => [
      { ...round.floor, scenario: `${round.floorName} (${round.name})` },
      { ...round.f, scenario: round.name },
    ]),
    ...results.filter((f) => !pairedRuns.has(f.scenario.replace(/ #\d+$/, ""))),
  ];
  const rows = shown.filter((f) => f.cpuMsPerRequest);
  if (rows.length === 0) return;
  const node = backend === "pglite" ? "node (incl. PGlite)" : "node";
  const run = rounds > 1 && paired.length > 0 ? "run (median round)" : "run";
  console.log(`\n| ${run} | workerd | ${node} | postgres | total |\n|---|---:|---:|---:|---:|`);
  for (const f of rows) {
    const cpu = f.cpuMsPerRequest as CpuSplit;
    const total = round(cpu.workerd + cpu.node + cpu.postgres, 2);
    const postgres = backend === "pglite" ? "-" : String(cpu.postgres);
    console.log(`| ${f.scenario} | ${cpu.workerd} | ${cpu.node} | ${postgres} | ${total} |`);
  }
}

/**
 * A copy of one of the project's wrangler configs with `main` pointing at a bench entry (here the tracking
 * worker plus the floor routes), written into the run's temp folder: its bindings and queues stay the
 * config's own.
 */
async function benchConfig(folder: string, configName: string, benchMain: string): Promise<string> {
  const config = await readFile(join(PROJECT_ROOT, configName), "utf8");
  const main = /^main = ".*"$/m;
  if (!main.test(config)) throw new Error(`${configName} has no main line`);
  const path = join(folder, configName.replace(/\.toml$/, ".bench.toml"));
  // The copy lives in a temp folder, so every relative path it holds as a value (the assets directory, the
  // alias targets) is made absolute; the alias keys are module specifiers and stay as they are.
  const absolute = config.replace(
    /= "(\.\/[^"]*)"/g,
    (_, relative: string) => `= ${JSON.stringify(join(PROJECT_ROOT, relative))}`,
  );
  await writeFile(path, absolute.replace(main, `main = ${JSON.stringify(join(PROJECT_ROOT, benchMain))}`));
  return path;
}

/** The worker of the stack a scenario's requests reach: the one whose most specific route matches its path. */
function servingWorker(stack: LocalStack, path: string): StackWorker {
  // Every route of the stack is `*<path prefix>*`, matched against the path and query string.
  const matching = stack.workers
    .flatMap((worker) => worker.routes.map((route) => ({ worker, prefix: route.slice(1, -1) })))
    .filter(({ prefix }) => path.startsWith(prefix))
    .sort((a, b) => b.prefix.length - a.prefix.length);
  const worker = matching[0]?.worker ?? stack.workers[0];
  if (!worker) throw new Error("the local stack has no worker");
  return worker;
}

/** Requests answered with the expected status per second: a failed request is not throughput. */
function answeredPerSecond(f: Figures): number {
  return (f.requests - f.non2xx) / f.seconds;
}

/** Said beside a ratio when some requests failed, so a table never shows a ratio made of errors. */
function failures(f: Figures): string {
  return f.non2xx > 0 ? ` (${f.non2xx} failed)` : "";
}

/** A run's name: the scenario's, and its round when there are several (`sale #2`). */
function runName(name: string, round: number): string {
  return rounds > 1 ? `${name} #${round + 1}` : name;
}

/** One scenario's reported round: its run and its floor's, the ratio, and the spread over every round. */
interface MedianRound {
  name: string;
  floorName: string;
  f: Figures;
  floor: Figures;
  ratio: number;
  /** The lowest and highest ratio over the rounds. */
  range: [number, number];
  /** The median p99 / p50 over the rounds. */
  spread: number | undefined;
}

/**
 * For each scenario measured beside a floor, the round whose ratio is the median (the lower of the two middle
 * ones for an even count): one burst of other work on a shared machine moves one round, not the report.
 */
function medianRounds(results: readonly Figures[]): MedianRound[] {
  const byName = new Map(results.map((f) => [f.scenario, f]));
  return SCENARIOS.flatMap((s) => {
    if (!s.floor) return [];
    const floorName = s.floor;
    const measured = Array.from({ length: rounds }, (_, i) => ({
      f: byName.get(runName(s.name, i)),
      floor: byName.get(runName(`${floorName} (${s.name})`, i)),
    }))
      .filter(
        (pair): pair is { f: Figures; floor: Figures } => pair.f !== undefined && pair.floor !== undefined,
      )
      .map(({ f, floor }) => ({ f, floor, ratio: answeredPerSecond(f) / answeredPerSecond(floor) }));
    const median = lowerMedian(measured, (pair) => pair.ratio);
    if (!median) return [];
    const ratios = measured.map((pair) => pair.ratio);
    const spreads = measured.filter((pair) => pair.f.p50Ms > 0).map((pair) => pair.f.p99Ms / pair.f.p50Ms);
    return [
      {
        name: s.name,
        floorName,
        ...median,
        range: [Math.min(...ratios), Math.max(...ratios)] as [number, number],
        spread: lowerMedian(spreads, (spread) => spread),
      },
    ];
  });
}

/** The item whose key is the median (the lower middle one for an even count), or undefined for none. */
function lowerMedian<T>(items: readonly T[], key: (item: T) => number): T | undefined {
  const sorted = [...items].sort((a, b) => key(a) - key(b));
  return sorted[Math.floor((sorted.length - 1) / 2)];
}

/**
 * Each scenario beside its floor: requests/s and p50 / p99, the throughput ratio (of the requests answered
 * with the expected status) and p99 / p50. With several rounds the row is the median round's
 * (`medianRounds`), the ratio followed by its range over the rounds, and p99 / p50 the median over the rounds.
 */
function printRatios(results: readonly Figures[]): void {
  const rows = medianRounds(results).map(({ name, floorName, f, floor, ratio, range, spread }) => [
    name,
    String(f.requestsPerSecond),
    `${f.p50Ms} / ${f.p99Ms} ms`,
    `${floorName}: ${floor.requestsPerSecond}`,
    `${floor.p50Ms} / ${floor.p99Ms} ms`,
    `${round(ratio, 2)}x${rounds > 1 ? ` (${round(range[0], 2)} to ${round(range[1], 2)})` : ""}${failures(f)}`,
    spread === undefined ? "-" : `${round(spread, 1)}x`,
    inStalls(f.stalls),
  ]);
  if (rows.length === 0) return;
  const header = [
    "scenario",
    "requests/s",
    "p50 / p99",
    "floor requests/s",
    "floor p50 / p99",
    rounds > 1 ? `ratio (${rounds} rounds)` : "ratio",
    "p99/p50",
    "above 3x p50: in stalls",
  ];
  if (rounds > 1)
    console.log(
      `\nEach row is the round of the median ratio; the range over the ${rounds} rounds in brackets.`,
    );
  console.log(`\n| ${header.join(" | ")} |\n|${header.map(() => "---").join("|")}|`);
  for (const row of rows) console.log(`| ${row.join(" | ")} |`);
}

/** The share of a run's responses above 3x p50 that ended in a stall of the whole worker (bench/stalls.ts). */
function inStalls(stalls: StallSummary): string {
  if (stalls.slow === 0) return "none above";
  return `${Math.round((100 * stalls.slowInStalls) / stalls.slow)}% of ${stalls.slow}`;
}

/** Prints the profile's self time per module and per function and keeps the profile for DevTools. */
async function reportProfile(
  name: string,
  profile: Parameters<typeof summariseProfile>[0],
  worker: StackWorker,
  requests: number,
): Promise<void> {
  const folder = join(PROJECT_ROOT, ".bench-profiles");
  await mkdir(folder, { recursive: true });
  const file = join(folder, `${name.replace(/[^\w-]+/g, "_")}.cpuprofile`);
  await writeFile(file, JSON.stringify(profile));
  const summary = await summariseProfile(profile, worker.outFile, requests);
  console.log(
    `  workerd busy/req    ${Math.round(summary.busyMicrosPerRequest)} us (${worker.name} isolate, profiled; ${file})\n\n` +
      `${selfTimeTable(`${name}: module`, summary.byModule, 15)}\n\n` +
      `${selfTimeTable(`${name}: function`, summary.byFunction, 25)}\n`,
  );
}

/** A free loopback TCP port (for workerd's inspector). */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() => (typeof address === "object" && address ? resolve(address.port) : reject()));
    });
  });
}

function settle(ms = 250): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

function round(value: number, digits: number): number {
  const factor = 10 ** digits;
  return Math.round(value * factor) / factor;
}

function positiveInteger(name: string, fallback: number): number {
  const value = positiveNumber(name, fallback);
  if (!Number.isInteger(value)) {
    console.error(`${name} must be a whole number, not "${process.env[name]}"`);
    process.exit(2);
  }
  return value;
}

function positiveNumber(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === "") return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value <= 0) {
    console.error(`${name} must be a positive number, not "${raw}"`);
    process.exit(2);
  }
  return value;
}
