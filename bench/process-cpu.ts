/**
 * CPU time used by each part of the benchmark's stack over a measured run, read from Linux's `/proc`:
 *
 * - `workerd`: the workers (every workerd process this process started);
 * - `node`: this process (the load generator, the Neon-protocol SQL endpoint, the local OpenID provider and,
 *   on the default database, embedded PGlite itself);
 * - `postgres`: every PostgreSQL server process on the machine (its backends, WAL writer and the rest), when
 *   the run uses a local server: nothing else should be using it during a benchmark.
 *
 * Why: on a shared 2-core machine requests per second move with whatever else runs, and a ratio to a floor
 * measured ten seconds earlier moves with it; CPU milliseconds per request hardly do, and they say which
 * part a scenario's time goes to (on a write path it is mostly the database parsing and planning statements
 * that are never prepared, as over Neon's HTTP endpoint). Elsewhere than Linux the figures are absent.
 */
import { execFileSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";

export interface CpuSplit {
  workerd: number;
  node: number;
  postgres: number;
}

/** Clock ticks per second of `/proc/<pid>/stat` times (100 on every usual Linux build). */
const ticksPerSecond = (() => {
  try {
    return Number(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).trim()) || 100;
  } catch {
    return 100;
  }
})();

interface ProcessStat {
  pid: number;
  name: string;
  parent: number;
  /** When the process started (clock ticks since boot): with the pid, it names one process. */
  started: string;
  /** User plus system CPU time, in milliseconds. */
  cpuMs: number;
}

function readStat(pid: string): ProcessStat | undefined {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, "utf8");
    // The name is in parentheses and may hold spaces; the fields after it are space separated.
    const open = text.indexOf("(");
    const close = text.lastIndexOf(")");
    const fields = text.slice(close + 2).split(" ");
    // After the name: state (0), ppid (1), ... utime (11), stime (12), ... starttime (19).
    return {
      pid: Number(pid),
      name: text.slice(open + 1, close),
      parent: Number(fields[1]),
      started: fields[19] ?? "",
      cpuMs: ((Number(fields[11]) + Number(fields[12])) * 1000) / ticksPerSecond,
    };
  } catch {
    return undefined; // the process ended between the listing and the read
  }
}

/** The CPU each counted process had used, by process (`pid@starttime`, or `self`), and its part. */
export type CpuSnapshot = Map<string, { part: keyof CpuSplit; cpuMs: number }>;

/**
 * What every counted process has used so far, or undefined without `/proc`. `withPostgres` false (a run on
 * PGlite): the machine's PostgreSQL server, idle or busy with something else, is left out.
 */
export function cpuSnapshot(withPostgres: boolean): CpuSnapshot | undefined {
  let pids: string[];
  try {
    pids = readdirSync("/proc").filter((entry) => /^\d+$/.test(entry));
  } catch {
    return undefined;
  }
  const stats = pids.map(readStat).filter((stat): stat is ProcessStat => stat !== undefined);
  const byPid = new Map(stats.map((stat) => [stat.pid, stat]));
  const startedHere = (stat: ProcessStat): boolean => {
    for (let p = stat.parent, hops = 0; p > 1 && hops < 16; hops++) {
      if (p === process.pid) return true;
      p = byPid.get(p)?.parent ?? 0;
    }
    return false;
  };
  const usage = process.cpuUsage();
  const snapshot: CpuSnapshot = new Map([
    ["self", { part: "node", cpuMs: (usage.user + usage.system) / 1000 }],
  ]);
  for (const stat of stats) {
    const key = `${stat.pid}@${stat.started}`;
    if (stat.name === "workerd" && startedHere(stat))
      snapshot.set(key, { part: "workerd", cpuMs: stat.cpuMs });
    else if (withPostgres && stat.name === "postgres")
      snapshot.set(key, { part: "postgres", cpuMs: stat.cpuMs });
  }
  return snapshot;
}

/**
 * CPU milliseconds per request of each part between two snapshots, process by process: a process started
 * during the run counts from zero, and one that ended during it counts nothing (its last CPU time is gone
 * with it; a pooled connection closed mid-run would otherwise take all it ever used off the total).
 */
export function cpuPerRequest(
  before: CpuSnapshot | undefined,
  after: CpuSnapshot | undefined,
  requests: number,
): CpuSplit | undefined {
  if (!before || !after || requests === 0) return undefined;
  const used: CpuSplit = { workerd: 0, node: 0, postgres: 0 };
  for (const [key, { part, cpuMs }] of after) used[part] += cpuMs - (before.get(key)?.cpuMs ?? 0);
  const per = (part: keyof CpuSplit) => Math.round((used[part] / requests) * 100) / 100;
  return { workerd: per("workerd"), node: per("node"), postgres: per("postgres") };
}
