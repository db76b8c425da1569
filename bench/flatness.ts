/**
 * `npm run bench:flat`: are the tracking calls as fast on a database of ten million clicks as on a near-empty
 * one? Runs `npm run bench` (bench/run.ts) for click, lead, sale and refund (with their floors) against the
 * small and the large database made by `npm run bench:generate`, `BENCH_SMALL_URL` (default the local
 * `affiliate_bench10k`) and `BENCH_LARGE_URL` (default `affiliate_bench10m`), alternating small and large for
 * `BENCH_ROUNDS` rounds (default 3) so load from other work on a shared machine hits both alike, and prints
 * the median over the rounds of each scenario's requests/s and p50/p99, and the large / small p50 ratio.
 *
 * The runs add rows to both databases (200 API keys, a few thousand clicks, leads, sales and refunds of the
 * bench program per run) and delete nothing. `BENCH_SECONDS` and `BENCH_CONNECTIONS` pass through.
 */
import { spawn } from "node:child_process";
import { requirePostgresUrl } from "./analytics-db.ts";

const local = "postgres://postgres@127.0.0.1:5432";
const targets = [
  {
    label: "10k",
    url: requirePostgresUrl("BENCH_SMALL_URL", process.env.BENCH_SMALL_URL ?? `${local}/affiliate_bench10k`),
  },
  {
    label: "10M",
    url: requirePostgresUrl("BENCH_LARGE_URL", process.env.BENCH_LARGE_URL ?? `${local}/affiliate_bench10m`),
  },
];
const rounds = Number(process.env.BENCH_ROUNDS ?? 3);
const scenarios = ["click", "lead", "sale", "refund"];

interface Figures {
  scenario: string;
  requestsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  errors: number;
}

/** One `npm run bench` against `url`; its figures are the JSON line it prints last. */
function runBench(url: string): Promise<Figures[]> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["--import", "tsx", "bench/run.ts", ...scenarios], {
      // One round per run: this script alternates the databases for its own rounds, and reads each scenario's
      // figures by its plain name (a run of several rounds names them `click #1`).
      env: { ...process.env, DATABASE_URL: url, BENCH_ROUNDS: "1" },
      stdio: ["ignore", "pipe", "inherit"],
    });
    let out = "";
    child.stdout.on("data", (chunk: Buffer) => {
      out += chunk.toString();
    });
    child.on("error", reject);
    child.on("close", (code) => {
      const last = out.trim().split("\n").pop() ?? "";
      if (code !== 0 || !last.startsWith("[")) {
        reject(new Error(`bench against ${url} exited ${code}:\n${out}`));
        return;
      }
      resolve(JSON.parse(last) as Figures[]);
    });
  });
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2
    ? (sorted[mid] as number)
    : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
};

const runs: Figures[][][] = targets.map(() => []);
for (let round = 1; round <= rounds; round++) {
  for (const [i, t] of targets.entries()) {
    const figures = await runBench(t.url);
    runs[i]?.push(figures);
    console.log(
      `round ${round}/${rounds} ${t.label}: ${figures.map((f) => `${f.scenario} p50 ${f.p50Ms} ms`).join(", ")}`,
    );
    if (figures.some((f) => f.errors > 0)) process.exitCode = 1;
  }
}

const figure = (target: number, scenario: string, pick: (f: Figures) => number) =>
  median((runs[target] ?? []).map((r) => pick(r.find((f) => f.scenario === scenario) as Figures)));
// Each scenario's p50 over its floor's p50 in the same run: load from other work slows both alike.
const overFloor = (target: number, scenario: string, floor: string) =>
  median(
    (runs[target] ?? []).map(
      (r) =>
        (r.find((f) => f.scenario === scenario)?.p50Ms ?? Number.NaN) /
        (r.find((f) => f.scenario === floor)?.p50Ms ?? Number.NaN),
    ),
  );
console.log(`\nmedian of ${rounds} round(s)`);
console.log(
  "| Scenario | 10k requests/s | 10k p50 / p99 | 10M requests/s | 10M p50 / p99 | 10M / 10k (p50) |",
);
console.log("|---|---|---|---|---|---|");
// `npm run bench` measures each scenario right after its own floor and names that run "floor-1 (click)",
// "floor-2 (lead)", ...: each scenario's row comes after its floor's.
const floorOf = (scenario: string) => `${scenario === "click" ? "floor-1" : "floor-2"} (${scenario})`;
for (const scenario of scenarios.flatMap((s) => [floorOf(s), s])) {
  const cells = targets.map((_, i) => [
    figure(i, scenario, (f) => f.requestsPerSecond).toFixed(0),
    `${figure(i, scenario, (f) => f.p50Ms)} / ${figure(i, scenario, (f) => f.p99Ms)} ms`,
  ]);
  const ratio = figure(1, scenario, (f) => f.p50Ms) / figure(0, scenario, (f) => f.p50Ms);
  console.log(`| ${scenario} | ${cells.flat().join(" | ")} | ${ratio.toFixed(2)} |`);
}
console.log("\n| Scenario | 10k p50 / floor p50 | 10M p50 / floor p50 |\n|---|---|---|");
for (const scenario of scenarios) {
  const floor = floorOf(scenario);
  console.log(
    `| ${scenario} (${floor}) | ${overFloor(0, scenario, floor).toFixed(2)} | ${overFloor(1, scenario, floor).toFixed(2)} |`,
  );
}
