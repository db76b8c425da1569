import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import * as esbuild from "esbuild";
import type { WorkerOptions } from "miniflare";
import { importWrangler } from "../../dev/local-stack.ts";

/**
 * The API worker as an auxiliary worker of a vitest-pool-workers project (DESIGN.md section 3, "Tests with
 * two workers"): the pool runs only its main worker from source, so this one is bundled by esbuild, with
 * the bindings and queue consumer of `wrangler.toml`. In the `stripe-events` project it consumes the
 * notifications the events worker (the main worker there) sends, and writes them, as in production.
 */
const root = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
const outFile = join(root, "node_modules", ".cache", "vitest-aux-workers", "affiliate-api", "index.js");

let built: Promise<Omit<WorkerOptions, "bindings"> & { bindings?: Record<string, unknown> }> | undefined;

async function build() {
  const { unstable_readConfig, unstable_getMiniflareWorkerOptions } = await importWrangler();
  const configPath = join(root, "wrangler.toml");
  const config = unstable_readConfig({ config: configPath });
  const { workerOptions, define, main } = unstable_getMiniflareWorkerOptions(config);
  const entry = main ?? config.main;
  if (!config.name || !entry) throw new Error("wrangler.toml has no name or main");
  await esbuild.build({
    absWorkingDir: root,
    entryPoints: [resolve(root, entry)],
    outfile: outFile,
    bundle: true,
    format: "esm",
    platform: "browser",
    target: "es2022",
    conditions: ["workerd", "worker", "browser"],
    external: ["node:*", "cloudflare:*"],
    define,
    logLevel: "warning",
  });
  return {
    ...(workerOptions as WorkerOptions),
    name: config.name,
    modules: true,
    modulesRoot: dirname(outFile),
    scriptPath: outFile,
  };
}

/**
 * Worker options for the API worker, its database pointed at the tests' SQL endpoint, consuming the
 * notifications queue with a short batch timeout (the production 2 s would slow every test that waits).
 */
export async function apiAuxWorker(bindings: {
  DATABASE_URL: string;
  NEON_FETCH_ENDPOINT: string;
}): Promise<WorkerOptions> {
  built ??= build();
  const options = await built;
  const consumers = (options.queueConsumers ?? {}) as Record<string, Record<string, unknown>>;
  return {
    ...options,
    // As the local stack: webhooks are delivered without a sealing key (`lib/webhooks/signing-key-gate.ts`).
    bindings: { ...options.bindings, WEBHOOK_SECRETS_UNSEALED: "allow", ...bindings },
    queueConsumers: Object.fromEntries(
      Object.entries(consumers).map(([queue, consumer]) => [queue, { ...consumer, maxBatchTimeout: 0.05 }]),
    ),
  } as WorkerOptions;
}
