import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type LocalStack, startLocalStack, WORKERS } from "../dev/local-stack.ts";
import { startUpstashProxy } from "../dev/upstash-rest-proxy.ts";

/** The HTTP workers (API and tracking): the events worker plays no part here, and a build costs seconds. */
const httpWorkers = WORKERS.filter((entry) => entry.config !== "wrangler.stripe-events.toml");

/**
 * Two instances of the API and tracking workers (two Miniflare runtimes, each built as `npm run dev` builds
 * it) over one database and one Redis reached through the Upstash REST path, as production runs many
 * isolates. Shared by the load test (limits and exactly-once, `test/node/load.redis.test.ts`) and the latency
 * bench (`npm run bench:load`). With a `postgres://` `databaseUrl` the shared database is that PostgreSQL,
 * otherwise PGlite in a temporary folder.
 */
export interface TwoInstances {
  first: LocalStack;
  second: LocalStack;
  startMs: number;
  stop(): Promise<void>;
}

export async function startTwoInstances(options: {
  redisUrl: string;
  databaseUrl?: string | undefined;
}): Promise<TwoInstances> {
  const started = performance.now();
  const proxy = await startUpstashProxy({
    redisUrl: options.redisUrl,
    token: `load-${crypto.randomUUID()}`,
  });
  const upstash = { url: proxy.url, token: proxy.token };
  const dataDirs = [await mkdtemp(join(tmpdir(), "load-a-")), await mkdtemp(join(tmpdir(), "load-b-"))];
  const postgres =
    options.databaseUrl && /^postgres(ql)?:\/\//.test(options.databaseUrl)
      ? { databaseUrl: options.databaseUrl }
      : {};
  const first = await startLocalStack({
    dataDir: dataDirs[0] as string,
    port: 0,
    logLevel: "none",
    upstash,
    workers: httpWorkers,
    ...postgres,
  });
  const second = await startLocalStack({
    dataDir: dataDirs[1] as string,
    port: 0,
    logLevel: "none",
    upstash,
    workers: httpWorkers,
    sharedSql: first.sql,
    seed: false,
  });
  return {
    first,
    second,
    startMs: performance.now() - started,
    async stop() {
      await second.stop();
      await first.stop();
      await proxy.close();
      for (const dir of dataDirs) await rm(dir, { recursive: true, force: true });
    },
  };
}

/** One JSON POST, timed from send to the whole body read. */
export async function timedPost(
  stack: LocalStack,
  path: string,
  body: unknown,
  headers: Record<string, string>,
): Promise<{ status: number; body: Record<string, unknown>; ms: number }> {
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

/** Runs `tasks` with at most `concurrency` in flight; results in the tasks' order. */
export async function inPool<T>(tasks: (() => Promise<T>)[], concurrency: number): Promise<T[]> {
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

/** Nearest-rank percentile of an ascending list. */
export function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] as number;
}

/** A run-unique 10.x.y.z per call, so per-IP buckets of earlier runs (same Redis) never meet this run's. */
export function freshIpSource(): () => string {
  const runTag = Math.floor(Math.random() * 200);
  let counter = 0;
  return () => {
    counter++;
    return `10.${runTag}.${Math.floor(counter / 250) % 250}.${(counter % 250) + 1}`;
  };
}
