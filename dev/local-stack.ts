/**
 * The whole service on one machine, offline: the Neon-protocol SQL endpoint (PGlite or a real
 * PostgreSQL) with migrations applied, the demo seed, and every worker of `WORKERS` built by esbuild and
 * served by ONE Miniflare instance (workerd) on one loopback port, routed per worker. Queues declared in
 * the wrangler configs are shared by all workers of the instance, so a producer in one worker delivers to
 * a consumer in another.
 *
 * Used by `npm run dev` (`dev/launcher.ts`), the benchmark (`bench/run.ts`) and the local-stack test.
 */
import { createHash } from "node:crypto";
import { existsSync } from "node:fs";
import { mkdir, writeFile } from "node:fs/promises";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import * as esbuild from "esbuild";
import { Log, LogLevel, Miniflare, type MiniflareOptions, type WorkerOptions } from "miniflare";
import type { Unstable_MiniflareWorkerOptions } from "wrangler";
import { CONSOLE_WORKER_PATHS, TRACKING_WORKER_PATHS } from "../functions/worker-paths.ts";
import { localDeviceHashKey } from "../lib/config/env.ts";
import { DEMO_PEOPLE } from "./demo-people.ts";
import { startOidcProvider } from "./oidc-provider.ts";
import { DEV_STRIPE_WEBHOOK_SECRET, type Demo, seedDemo } from "./seed.ts";
import { type SqlEndpoint, startSqlEndpoint } from "./sql-endpoint.ts";

/** One worker of the local stack: its wrangler config and where it is routed on the shared port. */
export interface WorkerEntry {
  /** Path of the wrangler config, relative to the project root. */
  config: string;
  /** wrangler environment (`[env.<name>]`), if any. */
  env?: string;
  /**
   * Miniflare route patterns on the shared port. Requests matching no worker's routes go to the FIRST
   * worker of the list, so the API worker comes first (it also serves `/healthz` and every unknown path).
   */
  routes?: string[];
}

/** The workers `npm run dev` runs. Adding a worker is one entry. */
export const WORKERS: readonly WorkerEntry[] = [
  { config: "wrangler.toml", routes: ["*/api/*"] },
  // Miniflare, like the edge, picks the most specific route: these win over the API worker's `*/api/*`.
  { config: "wrangler.tracking.toml", routes: TRACKING_WORKER_PATHS.map((path) => `*${path}`) },
  { config: "wrangler.console.toml", routes: CONSOLE_WORKER_PATHS.map((path) => `*${path}`) },
  { config: "wrangler.stripe-events.toml", routes: ["*/webhooks/*"] },
];

/**
 * The events worker's signing secret locally, unless `STRIPE_WEBHOOK_SECRET` is set (e.g. to the secret
 * `stripe listen` prints). Not a secret: it only lets local tools sign events the local worker accepts.
 */
export { DEV_STRIPE_WEBHOOK_SECRET };

export const PROJECT_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..");

export type StackLogLevel = "none" | "error" | "warn" | "info" | "debug";

export interface LocalStackOptions {
  /** Data folder: PGlite data, build output, Miniflare state, demo.json and the demo keys. */
  dataDir: string;
  /** HTTP port on `host`; 0 picks a free one. Default 8787. */
  port?: number;
  /** Default 127.0.0.1 (loopback only). */
  host?: string;
  /** A `postgres://` URL selects that PostgreSQL; anything else (or nothing) selects PGlite in `dataDir/pglite`. */
  databaseUrl?: string;
  /** The SQL endpoint's secret (the password of the workers' DATABASE_URL). Default: random per run. */
  sqlSecret?: string;
  /** Project root holding the wrangler configs and `migrations/`. Default: this repository. */
  root?: string;
  workers?: readonly WorkerEntry[];
  /** Rebuild on source changes and reload the workers (`mf.setOptions`). Default false. */
  watch?: boolean;
  /** Seed the demo data and write `dataDir/demo.json`. Default true. */
  seed?: boolean;
  /** Passed to the workers as UPSTASH_REDIS_REST_URL / _TOKEN; without it they use the in-memory limiter. */
  upstash?: { url: string; token: string };
  /** The events worker's STRIPE_WEBHOOK_SECRET. Default `DEV_STRIPE_WEBHOOK_SECRET`. */
  stripeWebhookSecret?: string;
  /** The first demo program's connected provider account (default `acct_demo_1`). */
  demoStripeAccountId?: string;
  /** The local OpenID provider's port on 127.0.0.1 (people sign in there). Default 0: a free one. */
  oidcPort?: number;
  /** Miniflare's log level (request lines at "info"). Default "warn". */
  logLevel?: StackLogLevel;
  /**
   * Another stack's SQL endpoint to use instead of starting one (a second instance of the workers over the
   * same database, as production runs many isolates over one); left running on `stop()`.
   */
  sharedSql?: SqlEndpoint;
  /** Sees every statement the workers send to the SQL endpoint (see `SqlEndpointOptions`). */
  onStatement?: (query: string, params: (string | null)[]) => void;
  /** Progress messages of the stack itself. Default: silent. */
  log?: (message: string) => void;
  /**
   * workerd's DevTools protocol port on 127.0.0.1 (`ws://127.0.0.1:<port>/core:user:<worker name>`), used by
   * `npm run bench:profile` to take CPU profiles of the real workers. Default: no inspector.
   */
  inspectorPort?: number;
}

export interface StackWorker {
  name: string;
  configPath: string;
  routes: string[];
  /** `[triggers] crons` of the config; nothing fires them locally, see `triggerScheduled`. */
  crons: string[];
  /** The esbuild bundle workerd runs (one `// <source path>` comment before each module's code). */
  outFile: string;
}

export interface LocalStack {
  /** e.g. `http://127.0.0.1:8787` (no trailing slash). */
  baseUrl: string;
  port: number;
  sql: SqlEndpoint;
  /** The seeded demo (also in `dataDir/demo.json`), unless `seed: false`. */
  demo: Demo | undefined;
  demoFile: string | undefined;
  mf: Miniflare;
  workers: StackWorker[];
  /** Runs a worker's `scheduled()` handler once (default: the first worker, its first cron). */
  triggerScheduled(workerName?: string, cron?: string): Promise<void>;
  /** Disposes esbuild, Miniflare (workerd releases the port) and the SQL endpoint. Idempotent. */
  stop(): Promise<void>;
}

interface BuiltWorker extends StackWorker {
  main: string;
  workerOptions: Unstable_MiniflareWorkerOptions["workerOptions"];
  define: Record<string, string>;
  context: esbuild.BuildContext | undefined;
  lastHash: string | undefined;
}

const HANDLED_SIGNALS = ["SIGINT", "SIGTERM", "SIGHUP"] as const;

/**
 * Importing wrangler and `new Miniflare()` install SIGINT/SIGTERM handlers that exit without disposing
 * (workerd would keep the port). Drop exactly the handlers `fn` added, keeping the caller's own (and the
 * test runner's): the owner of the process decides what a signal does. Miniflare's `exit` hook stays as
 * a last resort that kills workerd on `process.exit`.
 */
export async function withoutNewSignalHandlers<T>(fn: () => T | Promise<T>): Promise<T> {
  const before = new Map(HANDLED_SIGNALS.map((signal) => [signal, new Set(process.listeners(signal))]));
  try {
    return await fn();
  } finally {
    for (const signal of HANDLED_SIGNALS) {
      const kept = before.get(signal);
      for (const listener of process.listeners(signal)) {
        if (!kept?.has(listener)) process.removeListener(signal, listener);
      }
    }
  }
}

let wranglerModule: Promise<typeof import("wrangler")> | undefined;

/** wrangler, imported once with telemetry and network look-ups off and without its signal handlers. */
export function importWrangler(): Promise<typeof import("wrangler")> {
  process.env.WRANGLER_SEND_METRICS = "false";
  process.env.WRANGLER_SEND_ERROR_REPORTS = "false";
  process.env.CLOUDFLARE_CF_FETCH_ENABLED = "false";
  wranglerModule ??= withoutNewSignalHandlers(() => import("wrangler"));
  return wranglerModule;
}

export async function startLocalStack(options: LocalStackOptions): Promise<LocalStack> {
  const root = resolve(options.root ?? PROJECT_ROOT);
  const dataDir = resolve(options.dataDir);
  const host = options.host ?? "127.0.0.1";
  const log = options.log ?? (() => {});
  const entries = options.workers ?? WORKERS;
  if (entries.length === 0) throw new Error("local stack: no workers configured");
  await mkdir(dataDir, { recursive: true });

  const cleanups: (() => Promise<void>)[] = [];
  const cleanUp = async () => {
    for (const cleanup of cleanups.splice(0).reverse()) {
      await cleanup().catch((err: unknown) => console.error("[local-stack] cleanup failed:", err));
    }
  };

  try {
    const usePostgres = options.databaseUrl !== undefined && /^postgres(ql)?:\/\//i.test(options.databaseUrl);
    const sql =
      options.sharedSql ??
      (await startSqlEndpoint({
        host: "127.0.0.1",
        migrationsFolder: join(root, "migrations"),
        ...(options.sqlSecret ? { secret: options.sqlSecret } : {}),
        ...(options.onStatement ? { onStatement: options.onStatement } : {}),
        ...(usePostgres ? { databaseUrl: options.databaseUrl } : { dataDir: join(dataDir, "pglite") }),
      }));
    if (!options.sharedSql) cleanups.push(() => sql.close());
    log(`SQL endpoint (${sql.backend}) on ${sql.url}`);

    // A real OpenID provider, dev only: the console worker is configured with it as with a production one.
    const oidc = await startOidcProvider({
      port: options.oidcPort ?? 0,
      demoIdentities: DEMO_PEOPLE.map((p) => ({
        email: p.email,
        verified: p.providerEmailVerified,
        label: p.label,
      })),
    });
    cleanups.push(() => oidc.close());
    log(`OpenID provider on ${oidc.issuer}`);

    const { unstable_readConfig, unstable_getMiniflareWorkerOptions } = await importWrangler();
    const workers: BuiltWorker[] = entries.map((entry) => {
      const configPath = resolve(root, entry.config);
      if (!existsSync(configPath)) throw new Error(`local stack: ${entry.config} not found`);
      const config = unstable_readConfig({ config: configPath, ...(entry.env ? { env: entry.env } : {}) });
      if (!config.name) throw new Error(`local stack: ${entry.config} has no name`);
      const fromConfig = unstable_getMiniflareWorkerOptions(config, entry.env);
      const main = fromConfig.main ?? config.main;
      if (!main) throw new Error(`local stack: ${entry.config} has no main`);
      return {
        name: config.name,
        configPath,
        routes: entry.routes ?? [],
        crons: config.triggers.crons ?? [],
        main: resolve(dirname(configPath), main),
        outFile: join(dataDir, "build", config.name, "index.js"),
        workerOptions: fromConfig.workerOptions,
        define: fromConfig.define,
        context: undefined,
        lastHash: undefined,
      };
    });
    const names = new Set(workers.map((w) => w.name));
    if (names.size !== workers.length)
      throw new Error("local stack: two wrangler configs share a worker name");

    const stripeWebhookSecret = options.stripeWebhookSecret || DEV_STRIPE_WEBHOOK_SECRET;
    const injected: Record<string, string> = {
      // Carries the SQL endpoint's per-run secret as its password; the endpoint refuses statements without it.
      DATABASE_URL: sql.connectionString,
      NEON_FETCH_ENDPOINT: sql.url,
      // Read by the events worker only.
      STRIPE_WEBHOOK_SECRET: stripeWebhookSecret,
      // Read by the console worker only (sign-in, the command line's login).
      OIDC_ISSUER: oidc.issuer,
      OIDC_CLIENT_ID: oidc.clientId,
      OIDC_CLIENT_SECRET: oidc.clientSecret,
      OIDC_CLI_CLIENT_ID: oidc.cliClientId,
      // Webhooks are delivered with unsealed secrets locally; a deployed worker needs WEBHOOK_SECRET_KEY.
      WEBHOOK_SECRETS_UNSEALED: "allow",
      // The device hashes' key (tracking worker): the public local one; a deployment sets its own secret.
      DEVICE_HASH_KEY: localDeviceHashKey,
      ...(options.upstash
        ? { UPSTASH_REDIS_REST_URL: options.upstash.url, UPSTASH_REDIS_REST_TOKEN: options.upstash.token }
        : {}),
    };

    let mf: Miniflare | undefined;
    let stopped = false;
    let reloads = Promise.resolve();
    const reload = (worker: BuiltWorker) => {
      reloads = reloads
        .then(async () => {
          if (stopped || !mf) return;
          await mf.setOptions(miniflareOptions());
          log(`reloaded ${worker.name}`);
        })
        .catch((err: unknown) => console.error(`[local-stack] reload of ${worker.name} failed:`, err));
    };

    for (const worker of workers) {
      worker.context = await esbuild.context({
        absWorkingDir: root,
        entryPoints: [worker.main],
        outfile: worker.outFile,
        bundle: true,
        format: "esm",
        platform: "browser",
        target: "es2022",
        conditions: ["workerd", "worker", "browser"],
        external: ["node:*", "cloudflare:*"],
        define: worker.define,
        sourcemap: true,
        write: false,
        logLevel: "warning",
        plugins: [
          {
            name: "local-stack-output",
            setup(build) {
              build.onEnd(async (result) => {
                if (result.errors.length > 0 || !result.outputFiles) return;
                const hash = createHash("sha256");
                for (const file of result.outputFiles) hash.update(file.path).update(file.contents);
                const digest = hash.digest("hex");
                if (digest === worker.lastHash) return;
                await mkdir(dirname(worker.outFile), { recursive: true });
                for (const file of result.outputFiles) await writeFile(file.path, file.contents);
                const first = worker.lastHash === undefined;
                worker.lastHash = digest;
                if (!first) reload(worker);
              });
            },
          },
        ],
      });
      const context = worker.context;
      cleanups.push(() => context.dispose());
      await context.rebuild();
      log(`built ${worker.name} (${worker.outFile})`);
    }

    const logLevel = options.logLevel ?? "warn";
    const miniflareOptions = (): MiniflareOptions => ({
      host,
      port: options.port ?? 8787,
      // POST /cdn-cgi/handler/scheduled?cron=... fires a worker's scheduled() handler (add the header
      // `MF-Route-Override: <worker name>` to pick a worker other than the first).
      unsafeTriggerHandlers: true,
      // No network look-up of the `request.cf` object: use Miniflare's placeholder.
      cf: false,
      ...(options.inspectorPort === undefined ? {} : { inspectorPort: options.inspectorPort }),
      defaultPersistRoot: join(dataDir, "miniflare"),
      log: new Log(LOG_LEVELS[logLevel]),
      workers: workers.map(
        (worker): WorkerOptions => ({
          ...worker.workerOptions,
          name: worker.name,
          modules: true,
          // Module names are paths relative to this root; the build output may live outside the cwd.
          modulesRoot: dirname(worker.outFile),
          scriptPath: worker.outFile,
          routes: worker.routes,
          bindings: { ...worker.workerOptions.bindings, ...injected },
        }),
      ),
    });

    const instance = await withoutNewSignalHandlers(() => new Miniflare(miniflareOptions()));
    mf = instance;
    let started = false;
    cleanups.push(async () => {
      stopped = true;
      await reloads;
      // A runtime that failed to start rejects dispose() with the start error, already reported.
      await instance.dispose().catch((err: unknown) => {
        if (started) throw err;
      });
    });
    const ready = await instance.ready;
    started = true;
    const port = Number(ready.port);
    const baseUrl = `http://${host.includes(":") ? `[${host}]` : host}:${port}`;
    log(`workers ${workers.map((w) => w.name).join(", ")} on ${baseUrl}`);

    if (options.watch) {
      for (const worker of workers) await worker.context?.watch();
    }

    let demo: Demo | undefined;
    let demoFile: string | undefined;
    if (options.seed ?? true) {
      demo = await seedDemo(sql, {
        baseUrl,
        dataDir,
        stripeWebhookSecret,
        oidcIssuer: oidc.issuer,
        ...(options.demoStripeAccountId ? { stripeAccountId: options.demoStripeAccountId } : {}),
      });
      demoFile = join(dataDir, "demo.json");
      await writeFile(demoFile, `${JSON.stringify(demo, null, 2)}\n`, { mode: 0o600 });
    }

    let stopping: Promise<void> | undefined;
    return {
      baseUrl,
      port,
      sql,
      demo,
      demoFile,
      mf: instance,
      workers: workers.map(({ name, configPath, routes, crons, outFile }) => ({
        name,
        configPath,
        routes,
        crons,
        outFile,
      })),
      async triggerScheduled(workerName, cron) {
        const worker = workerName ? workers.find((w) => w.name === workerName) : workers[0];
        if (!worker) throw new Error(`local stack: no worker named ${workerName}`);
        const fetcher = await instance.getWorker(worker.name);
        const result = await fetcher.scheduled({
          cron: cron ?? worker.crons[0] ?? "* * * * *",
          scheduledTime: new Date(),
        });
        if (result.outcome !== "ok") throw new Error(`scheduled() of ${worker.name}: ${result.outcome}`);
      },
      stop() {
        stopping ??= cleanUp();
        return stopping;
      },
    };
  } catch (err) {
    await cleanUp();
    throw err;
  }
}

const LOG_LEVELS: Record<StackLogLevel, LogLevel> = {
  none: LogLevel.NONE,
  error: LogLevel.ERROR,
  warn: LogLevel.WARN,
  info: LogLevel.INFO,
  debug: LogLevel.DEBUG,
};
