import { loadavg } from "node:os";
import { monitorEventLoopDelay, PerformanceObserver } from "node:perf_hooks";
import { Worker } from "node:worker_threads";
import type { LoadClientSetup, Timed } from "./load-client.ts";
import { percentile, startTwoInstances } from "./two-instances.ts";

/**
 * `npm run bench:load`: the latency half of "load that holds" (README "Load"), a benchmark rather than a
 * timed test (its figures depend on what else the machine runs). Two instances of the API and tracking
 * workers over one database and one Redis (Upstash path): 300 warm-up clicks, then ROUNDS rounds of 200
 * clicks at 2 in flight alternating between the instances. Prints each round and exits 1 when the median
 * round's p99 is above 3x its p50. Needs REDIS_URL; DATABASE_URL (postgres://) selects the local PostgreSQL,
 * else PGlite.
 *
 * Beside each round: the machine's load average, and the pauses of this process's main thread, which serves
 * the local SQL endpoint and the Redis proxy (the client has a thread of its own): its longest event-loop
 * stall and its garbage collection time. A stall holds every request in flight, so a round whose p99 is near
 * its stall is the machine's tail (or this process's), not the service's.
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
const link = instances.first.demo?.programs[0]?.active_links[1];
if (!link) throw new Error("the demo seed has no second active link");
// The client runs in its own thread (see bench/load-client.ts).
const setup: LoadClientSetup = {
  baseUrls: [instances.first.baseUrl, instances.second.baseUrl],
  link,
  inFlight,
};
// Node 20 passes no module loader on to a worker thread: the worker registers tsx's, then loads the client.
const clientUrl = new URL("./load-client.ts", import.meta.url).href;
const client = new Worker(
  `import("tsx/esm/api").then(({ register }) => { register(); return import(${JSON.stringify(clientUrl)}); });`,
  { eval: true, workerData: setup },
);
const clicks = (count: number) =>
  new Promise<Timed[]>((resolve, reject) => {
    client.once("message", (answer: { results?: Timed[]; error?: string }) =>
      answer.results ? resolve(answer.results) : reject(new Error(answer.error)),
    );
    client.postMessage({ count });
  });

const stalls = monitorEventLoopDelay({ resolution: 5 });
stalls.enable();
let gcMs = 0;
const gcWatch = new PerformanceObserver((list) => {
  for (const entry of list.getEntries()) gcMs += entry.duration;
});
gcWatch.observe({ entryTypes: ["gc"] });

const ratios: number[] = [];
const lines: string[] = [];
try {
  await clicks(300);
  for (let round = 1; round <= rounds; round++) {
    stalls.reset();
    gcMs = 0;
    const started = performance.now();
    const results = await clicks(requestsPerRound);
    const wallSeconds = (performance.now() - started) / 1000;
    const failed = results.filter((r) => r.status !== 200).length;
    const sorted = results.map((r) => r.ms).sort((a, b) => a - b);
    const p50 = percentile(sorted, 50);
    const p99 = percentile(sorted, 99);
    ratios.push(p99 / p50);
    lines.push(
      `| ${round} | ${results.length} | ${(results.length / wallSeconds).toFixed(0)} req/s | ${p50.toFixed(1)} ms | ${p99.toFixed(1)} ms | ${(p99 / p50).toFixed(2)} | ${failed} | ${loadavg()[0]?.toFixed(1)} | ${(stalls.max / 1e6).toFixed(0)} ms | ${gcMs.toFixed(0)} ms |`,
    );
  }
} finally {
  stalls.disable();
  gcWatch.disconnect();
  await client.terminate();
  await instances.stop();
}

const medianRatio = [...ratios].sort((a, b) => a - b)[Math.floor(ratios.length / 2)] as number;
process.stdout.write(
  [
    `two instances, ${process.env.DATABASE_URL ? "PostgreSQL" : "PGlite"}, Redis via the Upstash path (startup ${(instances.startMs / 1000).toFixed(1)} s)`,
    "| Round | Requests | Throughput | p50 | p99 | p99 / p50 | not 200 | load avg | longest stall | GC |",
    "|---|---|---|---|---|---|---|---|---|---|",
    ...lines,
    `median p99/p50: ${medianRatio.toFixed(2)} (target at most 3)`,
    "",
  ].join("\n"),
);
process.exit(medianRatio <= 3 ? 0 : 1);
