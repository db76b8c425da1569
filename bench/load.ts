import { freshIpSource, inPool, percentile, startTwoInstances, timedPost } from "./two-instances.ts";

/**
 * `npm run bench:load`: the latency half of "load that holds" (README "Load"), a benchmark rather than a
 * timed test (its figures depend on what else the machine runs). Two API worker instances over one database
 * and one Redis (Upstash path): 300 warm-up clicks, then ROUNDS rounds of 200 clicks at 2 in flight
 * alternating between the instances. Prints each round and exits 1 when the median round's p99 is above
 * 3x its p50. Needs REDIS_URL; DATABASE_URL (postgres://) selects the local PostgreSQL, else PGlite.
 */
const redisUrl = process.env.REDIS_URL;
if (!redisUrl) {
  process.stderr.write("bench:load needs REDIS_URL (e.g. redis://127.0.0.1:6379)\n");
  process.exit(2);
}
const rounds = Number(process.env.LOAD_ROUNDS ?? 5);
const requestsPerRound = 200;
const inFlight = 2;

const instances = await startTwoInstances({ redisUrl, databaseUrl: process.env.DATABASE_URL });
const freshIp = freshIpSource();
const link = instances.first.demo?.programs[0]?.active_links[1];
if (!link) throw new Error("the demo seed has no second active link");
const send = (i: number) => () =>
  timedPost(
    i % 2 === 0 ? instances.first : instances.second,
    "/api/v1/track/click",
    { affiliate_url: `https://shop.example/?aff=${link}` },
    { "CF-Connecting-IP": freshIp() },
  );

const ratios: number[] = [];
const lines: string[] = [];
try {
  await inPool(
    Array.from({ length: 300 }, (_, i) => send(i)),
    inFlight,
  );
  for (let round = 1; round <= rounds; round++) {
    const started = performance.now();
    const results = await inPool(
      Array.from({ length: requestsPerRound }, (_, i) => send(i)),
      inFlight,
    );
    const wallSeconds = (performance.now() - started) / 1000;
    const failed = results.filter((r) => r.status !== 200).length;
    const sorted = results.map((r) => r.ms).sort((a, b) => a - b);
    const p50 = percentile(sorted, 50);
    const p99 = percentile(sorted, 99);
    ratios.push(p99 / p50);
    lines.push(
      `| ${round} | ${results.length} | ${(results.length / wallSeconds).toFixed(0)} req/s | ${p50.toFixed(1)} ms | ${p99.toFixed(1)} ms | ${(p99 / p50).toFixed(2)} | ${failed} |`,
    );
  }
} finally {
  await instances.stop();
}

const medianRatio = [...ratios].sort((a, b) => a - b)[Math.floor(ratios.length / 2)] as number;
process.stdout.write(
  [
    `two instances, ${process.env.DATABASE_URL ? "PostgreSQL" : "PGlite"}, Redis via the Upstash path (startup ${(instances.startMs / 1000).toFixed(1)} s)`,
    "| Round | Requests | Throughput | p50 | p99 | p99 / p50 | not 200 |",
    "|---|---|---|---|---|---|---|",
    ...lines,
    `median p99/p50: ${medianRatio.toFixed(2)} (target at most 3)`,
    "",
  ].join("\n"),
);
process.exit(medianRatio <= 3 ? 0 : 1);
