import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type LocalStack, startLocalStack, WORKERS } from "../../dev/local-stack.ts";
import { startUpstashProxy, type UpstashProxy } from "../../dev/upstash-rest-proxy.ts";

/**
 * Load that holds (README "Load"): two instances of the workers (two Miniflare runtimes, each as
 * `npm run dev` builds them) over one database and one Redis, reached through the Upstash REST path, as
 * production runs many isolates. Bounded: well under a minute. Runs when REDIS_URL is set (CI sets it); with
 * a `postgres://` DATABASE_URL the shared database is that PostgreSQL, otherwise PGlite.
 */
const redisUrl = process.env.REDIS_URL;
if (!redisUrl) throw new Error("load.redis.test.ts needs REDIS_URL");
const databaseUrl = process.env.DATABASE_URL;

let proxy: UpstashProxy;
let stackStartMs = 0;
let first: LocalStack;
let second: LocalStack;
const dataDirs: string[] = [];

/** A run-unique 10.x.y.z per call, so per-IP buckets of earlier runs (same Redis) never meet this one. */
const runTag = Math.floor(Math.random() * 200);
let ipCounter = 0;
function freshIp(): string {
  ipCounter++;
  return `10.${runTag}.${Math.floor(ipCounter / 250) % 250}.${(ipCounter % 250) + 1}`;
}

async function post(stack: LocalStack, path: string, body: unknown, headers: Record<string, string>) {
  const started = performance.now();
  const response = await fetch(`${stack.baseUrl}${path}`, {
    method: "POST",
    headers: { "Content-Type": "application/json", ...headers },
    body: JSON.stringify(body),
  });
  const text = await response.text();
  return {
    status: response.status,
    body: text ? (JSON.parse(text) as Record<string, unknown>) : {},
    ms: performance.now() - started,
  };
}

/** Runs `tasks` with at most `concurrency` in flight. */
async function pool<T>(tasks: (() => Promise<T>)[], concurrency: number): Promise<T[]> {
  const results: T[] = new Array(tasks.length);
  let next = 0;
  const lanes = Array.from({ length: concurrency }, async () => {
    while (next < tasks.length) {
      const i = next++;
      results[i] = await (tasks[i] as () => Promise<T>)();
    }
  });
  await Promise.all(lanes);
  return results;
}

/** The limits are fixed one-minute windows: a burst starts early in one, so it cannot straddle two. */
async function startOfAFreshWindow(needMs: number): Promise<void> {
  const intoWindow = Date.now() % 60_000;
  if (60_000 - intoWindow < needMs) await new Promise((r) => setTimeout(r, 60_000 - intoWindow + 50));
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] as number;
}

const demoProgram = () => {
  const program = first.demo?.programs[0];
  if (!program) throw new Error("no demo program");
  return program;
};

beforeAll(async () => {
  const started = performance.now();
  proxy = await startUpstashProxy({ redisUrl, token: `load-${crypto.randomUUID()}` });
  const upstash = { url: proxy.url, token: proxy.token };
  dataDirs.push(await mkdtemp(join(tmpdir(), "load-a-")), await mkdtemp(join(tmpdir(), "load-b-")));
  first = await startLocalStack({
    dataDir: dataDirs[0] as string,
    port: 0,
    logLevel: "none",
    upstash,
    // The API worker only: the events worker plays no part here, and each build costs seconds.
    workers: WORKERS.slice(0, 1),
    ...(databaseUrl && /^postgres(ql)?:\/\//.test(databaseUrl) ? { databaseUrl } : {}),
  });
  second = await startLocalStack({
    dataDir: dataDirs[1] as string,
    port: 0,
    logLevel: "none",
    upstash,
    workers: WORKERS.slice(0, 1),
    sharedSql: first.sql,
    seed: false,
  });
  stackStartMs = performance.now() - started;
}, 120_000);

afterAll(async () => {
  await second?.stop();
  await first?.stop();
  await proxy?.close();
  for (const dir of dataDirs) await rm(dir, { recursive: true, force: true });
});

describe("load over two instances sharing Redis (Upstash path) and the database", () => {
  it("a per-IP limit (click, 60/min) holds exactly: 150 requests over both give 60 200s, each click stored once", async () => {
    const ip = freshIp();
    const link = demoProgram().active_links[0];
    await startOfAFreshWindow(12_000);
    const results = await pool(
      Array.from(
        { length: 150 },
        (_, i) => () =>
          post(
            i % 2 === 0 ? first : second,
            "/api/v1/track/click",
            { affiliate_url: `https://shop.example/?aff=${link}` },
            {
              "CF-Connecting-IP": ip,
            },
          ),
      ),
      10,
    );
    const accepted = results.filter((r) => r.status === 200);
    expect(accepted).toHaveLength(60);
    expect(results.filter((r) => r.status === 429)).toHaveLength(90);
    const clickIds = accepted.map((r) => r.body.click_id as string);
    expect(new Set(clickIds).size).toBe(60);
    const stored = await first.sql.query(
      "select count(*)::int as n, count(distinct click_id)::int as d from affiliate_click_events where click_id = any($1::text[])",
      [clickIds],
    );
    expect(stored.rows[0]).toEqual({ n: "60", d: "60" });
  });

  it("a per-key limit (sale, 120/min) holds exactly, and every accepted sale is stored once, duplicates refused", async () => {
    const program = demoProgram();
    const click = await post(
      first,
      "/api/v1/track/click",
      { affiliate_url: `https://shop.example/?aff=${program.active_links[0]}` },
      {
        "CF-Connecting-IP": freshIp(),
      },
    );
    expect(click.status).toBe(200);
    const clickId = click.body.click_id as string;
    const runId = crypto.randomUUID().slice(0, 8);
    await startOfAFreshWindow(12_000);
    // 100 payments, each reported to both instances at once (200 requests), for one key: the first 120
    // requests pass the limit; of each payment's two calls that pass, one records and one answers 409.
    const tasks = Array.from({ length: 100 }, (_, i) =>
      [first, second].map(
        (stack) => () =>
          post(
            stack,
            "/api/v1/track/sale",
            { transaction_id: `load-${runId}-${i}`, amount_cents: 1000, click_id: clickId },
            {
              Authorization: `Bearer ${program.api_key}`,
              "CF-Connecting-IP": freshIp(),
            },
          ),
      ),
    ).flat();
    const results = await pool(tasks, 10);
    const limited = results.filter((r) => r.status === 429).length;
    const recorded = results.filter((r) => r.status === 200).length;
    const duplicates = results.filter((r) => r.status === 409).length;
    expect(limited).toBe(80);
    expect(recorded + duplicates).toBe(120);
    expect(results.length).toBe(recorded + duplicates + limited);
    const stored = await first.sql.query(
      "select count(*)::int as n, count(distinct processor_event_id)::int as d from affiliate_sale_events where processor_event_id like $1",
      [`load-${runId}-%`],
    );
    expect(stored.rows[0]).toEqual({ n: String(recorded), d: String(recorded) });
  });

  it("latency holds: p99 within 3x p50 over 200 clicks at 2 in flight, spread over both instances", async () => {
    const link = demoProgram().active_links[1];
    const send = (i: number) => () =>
      post(
        i % 2 === 0 ? first : second,
        "/api/v1/track/click",
        { affiliate_url: `https://shop.example/?aff=${link}` },
        {
          "CF-Connecting-IP": freshIp(),
        },
      );
    await pool(
      Array.from({ length: 40 }, (_, i) => send(i)),
      2,
    ); // warm both runtimes and connections
    // A tail the service makes shows in every round; a neighbour's CPU burst on a shared machine (the
    // stalls come in clusters, in both instances at once) does not: up to three rounds, one must hold.
    const rounds: string[] = [];
    let held = false;
    for (let round = 1; round <= 3 && !held; round++) {
      const started = performance.now();
      const results = await pool(
        Array.from({ length: 200 }, (_, i) => send(i)),
        2,
      );
      const wallMs = performance.now() - started;
      expect(results.every((r) => r.status === 200)).toBe(true);
      const sorted = results.map((r) => r.ms).sort((x, y) => x - y);
      const p50 = percentile(sorted, 50);
      const p99 = percentile(sorted, 99);
      held = p99 <= 3 * p50;
      rounds.push(
        `round ${round}: ${results.length} requests, ${(results.length / (wallMs / 1000)).toFixed(0)} req/s, p50 ${p50.toFixed(1)} ms, p99 ${p99.toFixed(1)} ms (${(p99 / p50).toFixed(2)}x), max ${sorted.at(-1)?.toFixed(1)} ms`,
      );
    }
    console.log(
      `load over 2 instances (startup ${(stackStartMs / 1000).toFixed(1)} s)\n${rounds.join("\n")}`,
    );
    expect(held, rounds.join("; ")).toBe(true);
  });
});
