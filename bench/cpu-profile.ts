/**
 * CPU profiles of a worker running in workerd, over the DevTools protocol of workerd's inspector
 * (`Profiler.start` / `Profiler.stop`), and their self time summed per function and per source module.
 * Used by `npm run bench:profile`: the profile covers exactly one measured scenario run.
 *
 * The bundle is esbuild's, unminified: each module's code follows a `// <source path>` comment, so a sampled
 * function's line in the bundle names the source file it came from (no source map library needed).
 */
import { readFile } from "node:fs/promises";

/** The subset of a DevTools `Profiler.Profile` this file reads. */
interface Profile {
  nodes: {
    id: number;
    callFrame: { functionName: string; url: string; lineNumber: number; columnNumber: number };
  }[];
  startTime: number;
  endTime: number;
  samples?: number[];
  timeDeltas?: number[];
}

export interface CpuProfiler {
  start(): Promise<void>;
  /** Stops the profiler and returns the profile (`.cpuprofile` JSON, loadable in any DevTools). */
  stop(): Promise<Profile>;
  close(): void;
}

/** Sampling interval of the profiler, microseconds (V8's default is 1,000). */
const SAMPLING_INTERVAL_US = 100;

/** Connects to one worker of a Miniflare instance started with `inspectorPort`. */
export async function connectProfiler(inspectorPort: number, workerName: string): Promise<CpuProfiler> {
  // Miniflare names each user worker's workerd service `core:user:<name>`.
  const socket = new WebSocket(`ws://127.0.0.1:${inspectorPort}/core:user:${workerName}`);
  await new Promise<void>((resolve, reject) => {
    socket.addEventListener("open", () => resolve(), { once: true });
    socket.addEventListener("error", () => reject(new Error(`inspector of ${workerName} refused`)), {
      once: true,
    });
  });
  let nextId = 1;
  const pending = new Map<number, { resolve: (result: unknown) => void; reject: (err: Error) => void }>();
  socket.addEventListener("message", (event) => {
    const message = JSON.parse(String(event.data)) as {
      id?: number;
      result?: unknown;
      error?: { message: string };
    };
    if (message.id === undefined) return; // events (console messages, script parsed) are not used
    const waiter = pending.get(message.id);
    pending.delete(message.id);
    if (message.error) waiter?.reject(new Error(`inspector: ${message.error.message}`));
    else waiter?.resolve(message.result);
  });
  const send = (method: string, params: Record<string, unknown> = {}) =>
    new Promise<unknown>((resolve, reject) => {
      const id = nextId++;
      pending.set(id, { resolve, reject });
      socket.send(JSON.stringify({ id, method, params }));
    });
  await send("Profiler.enable");
  await send("Profiler.setSamplingInterval", { interval: SAMPLING_INTERVAL_US });
  return {
    start: async () => {
      await send("Profiler.start");
    },
    stop: async () => ((await send("Profiler.stop")) as { profile: Profile }).profile,
    close: () => socket.close(),
  };
}

export interface SelfTime {
  /** A function (`name  module:line`) or a source module (its path; `(program)`, `(garbage collector)`). */
  name: string;
  /** Self CPU time per request, microseconds. */
  microsPerRequest: number;
  share: number;
}

export interface ProfileSummary {
  /**
   * Time the isolate's thread was busy per request (every sample but `(idle)`), microseconds. Samples are
   * taken on the wall clock: on a loaded machine a thread descheduled in the middle of a function counts
   * that wait to the function, so compare shares and runs made under similar load.
   */
  busyMicrosPerRequest: number;
  byModule: SelfTime[];
  byFunction: SelfTime[];
}

/** Self time per function and per source module of `profile`, divided over `requests`. */
export async function summariseProfile(
  profile: Profile,
  bundlePath: string,
  requests: number,
): Promise<ProfileSummary> {
  const moduleOfLine = await bundleModules(bundlePath);
  const nodes = new Map(profile.nodes.map((node) => [node.id, node]));
  const samples = profile.samples ?? [];
  const deltas = profile.timeDeltas ?? [];
  const byFunction = new Map<string, number>();
  const byModule = new Map<string, number>();
  let busy = 0;
  // timeDeltas[i] is the time before sample i, so sample i lasted until the next one.
  for (let i = 0; i < samples.length; i++) {
    const node = nodes.get(samples[i] as number);
    const micros = deltas[i + 1] ?? 0;
    if (!node || micros <= 0) continue;
    const { functionName, url, lineNumber } = node.callFrame;
    if (functionName === "(idle)") continue;
    busy += micros;
    // Built-ins (fetch, Response, JSON, crypto) have no script: they count under their own name.
    const builtIn = url === "" ? functionName || "(native)" : undefined;
    const module = builtIn ?? moduleOfLine(lineNumber) ?? url;
    const fn = builtIn ?? `${functionName || "(anonymous)"}  ${module}:${lineNumber + 1}`;
    byModule.set(module, (byModule.get(module) ?? 0) + micros);
    byFunction.set(fn, (byFunction.get(fn) ?? 0) + micros);
  }
  const rank = (totals: Map<string, number>): SelfTime[] =>
    [...totals]
      .sort((a, b) => b[1] - a[1])
      .map(([name, micros]) => ({
        name,
        microsPerRequest: micros / Math.max(requests, 1),
        share: busy > 0 ? micros / busy : 0,
      }));
  return {
    busyMicrosPerRequest: busy / Math.max(requests, 1),
    byModule: rank(byModule),
    byFunction: rank(byFunction),
  };
}

/**
 * The source module of a bundle line (0-based): esbuild writes `// path/of/module.ts` before each module's
 * code, so the last such comment at or above the line names it.
 */
async function bundleModules(bundlePath: string): Promise<(line: number) => string | undefined> {
  const lines = (await readFile(bundlePath, "utf8")).split("\n");
  const starts: { line: number; module: string }[] = [];
  for (let i = 0; i < lines.length; i++) {
    const match = /^\/\/ ((?:\.\.\/)*[\w@.-][^\s]*\.(?:[cm]?js|ts|tsx|json))$/.exec(lines[i] as string);
    if (match) starts.push({ line: i, module: shortModule(match[1] as string) });
  }
  return (line) => {
    let low = 0;
    let high = starts.length - 1;
    let found: string | undefined;
    while (low <= high) {
      const mid = (low + high) >> 1;
      const start = starts[mid] as { line: number; module: string };
      if (start.line <= line) {
        found = start.module;
        low = mid + 1;
      } else high = mid - 1;
    }
    return found;
  };
}

/** `node_modules/drizzle-orm/pg-core/dialect.js` reads better as `drizzle-orm/pg-core/dialect.js`. */
function shortModule(path: string): string {
  const inPackages = path.lastIndexOf("node_modules/");
  return inPackages >= 0 ? path.slice(inPackages + "node_modules/".length) : path;
}

/** A markdown table of the first `limit` rows. */
export function selfTimeTable(title: string, rows: readonly SelfTime[], limit: number): string {
  const lines = [`| ${title} | self us/req | share |`, "|---|---:|---:|"];
  for (const row of rows.slice(0, limit)) {
    lines.push(
      `| ${row.name.replaceAll("|", "\\|")} | ${row.microsPerRequest.toFixed(1)} | ${(row.share * 100).toFixed(1)}% |`,
    );
  }
  return lines.join("\n");
}
