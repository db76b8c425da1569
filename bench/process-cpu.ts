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
    // After the name: state (0), ppid (1), ... utime (11), stime (12).
    return {
      pid: Number(pid),
      name: text.slice(open + 1, close),
      parent: Number(fields[1]),
      cpuMs: ((Number(fields[11]) + Number(fields[12])) * 1000) / ticksPerSecond,
    };
  } catch {
    return undefined; // the process ended between the listing and the read
  }
}

/**
 * The CPU used so far by each part, or undefined without `/proc`. `withPostgres` false (a run on PGlite):
 * the machine's PostgreSQL server, idle or busy with something else, is left out.
 */
export function cpuSnapshot(withPostgres: boolean): CpuSplit | undefined {
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
  const split: CpuSplit = { workerd: 0, node: (usage.user + usage.system) / 1000, postgres: 0 };
  for (const stat of stats) {
    if (stat.name === "workerd" && startedHere(stat)) split.workerd += stat.cpuMs;
    else if (withPostgres && stat.name === "postgres") split.postgres += stat.cpuMs;
  }
  return split;
}

/** CPU milliseconds per request of each part between two snapshots. */
export function cpuPerRequest(
  before: CpuSplit | undefined,
  after: CpuSplit | undefined,
  requests: number,
): CpuSplit | undefined {
  if (!before || !after || requests === 0) return undefined;
  const per = (key: keyof CpuSplit) => Math.round(((after[key] - before[key]) / requests) * 100) / 100;
  return { workerd: per("workerd"), node: per("node"), postgres: per("postgres") };
}
