import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  freshIpSource,
  inPool as pool,
  timedPost as post,
  startTwoInstances,
  type TwoInstances,
} from "../../bench/two-instances.ts";

/**
 * Load that holds (README "Load"): two instances of the workers over one database and one Redis, reached
 * through the Upstash REST path (`bench/two-instances.ts`), as production runs many isolates: the limits
 * hold exactly across instances and every accepted event is stored once. Bounded: well under a minute.
 * Runs when REDIS_URL is set (CI sets it); with a `postgres://` DATABASE_URL the shared database is that
 * PostgreSQL, otherwise PGlite. Latency (p99 within 3x p50) is a benchmark, not a timed test:
 * `npm run bench:load`.
 */
const redisUrl = process.env.REDIS_URL;
if (!redisUrl) throw new Error("load.redis.test.ts needs REDIS_URL");

let instances: TwoInstances;
const freshIp = freshIpSource();

/** The limits are fixed one-minute windows: a burst starts early in one, so it cannot straddle two. */
async function startOfAFreshWindow(needMs: number): Promise<void> {
  const intoWindow = Date.now() % 60_000;
  if (60_000 - intoWindow < needMs) await new Promise((r) => setTimeout(r, 60_000 - intoWindow + 50));
}

const demoProgram = () => {
  const program = instances.first.demo?.programs[0];
  if (!program) throw new Error("no demo program");
  return program;
};

beforeAll(async () => {
  instances = await startTwoInstances({ redisUrl, databaseUrl: process.env.DATABASE_URL });
}, 120_000);

afterAll(async () => {
  await instances?.stop();
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
            i % 2 === 0 ? instances.first : instances.second,
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
    const stored = await instances.first.sql.query(
      "select count(*)::int as n, count(distinct click_id)::int as d from affiliate_click_events where click_id = any($1::text[])",
      [clickIds],
    );
    expect(stored.rows[0]).toEqual({ n: "60", d: "60" });
  });

  it("a per-key limit (sale, 120/min) holds exactly, and every accepted sale is stored once, duplicates refused", async () => {
    const program = demoProgram();
    const click = await post(
      instances.first,
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
      [instances.first, instances.second].map(
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
    const stored = await instances.first.sql.query(
      "select count(*)::int as n, count(distinct processor_event_id)::int as d from affiliate_sale_events where processor_event_id like $1",
      [`load-${runId}-%`],
    );
    expect(stored.rows[0]).toEqual({ n: String(recorded), d: String(recorded) });
  });
});
