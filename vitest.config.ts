import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { cloudflareTest } from "@cloudflare/vitest-pool-workers";
import { kCurrentWorker } from "miniflare";
import { defineConfig } from "vitest/config";
import { localDeviceHashKey } from "./lib/config/env.ts";

/**
 * Projects: "node" runs the local-stack tools (database endpoint, Upstash REST proxy, dev stack) in Node;
 * "workers" runs the API worker in workerd against the local Neon-protocol database endpoint, which the
 * global setup starts (in-memory PGlite, or the PostgreSQL of DATABASE_URL) and hands over with `inject`;
 * "stripe-events" runs the payments provider's events worker the same way; "browser" (below).
 *
 * Suites that need a real multi-connection PostgreSQL (`*.postgres.test.ts`: lock contention) or a real
 * Redis (`*.redis.test.ts`) are part of the run only when DATABASE_URL / REDIS_URL are set; CI sets both
 * and fails if any test is skipped.
 */
const databaseUrl = process.env.DATABASE_URL;
/** The events worker's signing secret in tests; the tests sign their payloads with it. */
const testStripeWebhookSecret = "whsec_test_affiliate_events_0123456789abcdef";
const withPostgres = Boolean(databaseUrl && /^postgres(ql)?:\/\//.test(databaseUrl));
const withRedis = Boolean(process.env.REDIS_URL);
const gated = [
  ...(withPostgres ? [] : ["**/*.postgres.test.ts"]),
  ...(withRedis ? [] : ["**/*.redis.test.ts"]),
];
if (gated.length > 0 && !process.env.VITEST_WORKER_ID) {
  const missing = [!withPostgres && "DATABASE_URL (postgres://...)", !withRedis && "REDIS_URL"].filter(
    Boolean,
  );
  console.log(`Not running ${gated.join(", ")}: set ${missing.join(" and ")} to include them.`);
}

/**
 * "browser": the tracker in real headless Chromium (Debian's `chromium` package, driven by playwright-core)
 * against the local stack. Left out only when that browser is not installed; `.ci/run` installs it.
 */
const chromiumPath = "/usr/bin/chromium";
const withChromium = existsSync(chromiumPath);
if (!withChromium && !process.env.VITEST_WORKER_ID) {
  console.log(
    `Not running the browser project (test/browser): ${chromiumPath} is missing (apt-get install -y chromium).`,
  );
}

/** `stripe` ships source maps whose sources it leaves out: without this Vite warns once per module. */
const stripeWithoutSourceMaps = {
  name: "stripe-without-source-maps",
  enforce: "pre" as const,
  async load(id: string) {
    const file = id.split("?")[0] ?? id;
    if (!file.includes("/node_modules/stripe/") || !file.endsWith(".js")) return null;
    const code = await readFile(file, "utf8");
    return { code: code.replace(/\n\/\/# sourceMappingURL=\S+\s*$/, "\n"), map: null };
  },
};

export default defineConfig({
  test: {
    projects: [
      {
        test: {
          name: "node",
          environment: "node",
          include: ["test/node/**/*.test.ts"],
          exclude: gated,
          testTimeout: 60_000,
          hookTimeout: 60_000,
        },
      },
      {
        plugins: [
          stripeWithoutSourceMaps,
          cloudflareTest(async ({ inject }) => ({
            // The three HTTP workers, routed by path. The API worker's bindings (queues, crons) and, below,
            // the console worker's cover the tracking worker's.
            main: "./test/workers/routed-workers.ts",
            wrangler: { configPath: "./wrangler.toml" },
            miniflare: {
              // The console worker's static assets (wrangler.console.toml).
              assets: {
                directory: "./dashboard/public",
                binding: "ASSETS",
                run_worker_first: ["/openapi.json"],
              },
              // The console worker's test events reach the tracking worker's routes through this same entry.
              serviceBindings: { TRACKING: kCurrentWorker },
              bindings: {
                DATABASE_URL: inject("sqlConnectionString"),
                NEON_FETCH_ENDPOINT: inject("sqlEndpointUrl"),
                OIDC_ISSUER: inject("oidc").issuer,
                OIDC_CLIENT_ID: inject("oidc").clientId,
                OIDC_CLIENT_SECRET: inject("oidc").clientSecret,
                OIDC_CLI_CLIENT_ID: inject("oidc").cliClientId,
                STRIPE_SECRET_KEY: inject("stripeConnect").secretKey,
                STRIPE_CONNECT_CLIENT_ID: "ca_test_platform",
                STRIPE_API_HOST: inject("stripeConnect").host,
                STRIPE_API_PORT: String(inject("stripeConnect").port),
                STRIPE_API_PROTOCOL: "http",
                // Deliver webhooks without a sealing key, as the local stack does (a deployed worker does not).
                WEBHOOK_SECRETS_UNSEALED: "allow",
                // The device hashes' public local key, as the local stack sets it.
                DEVICE_HASH_KEY: localDeviceHashKey,
                // Every statement alone: the test runner's Durable Object, which runs the worker here, does not
                // let one request's statement wait for another's (lib/db/group-commit.ts); the group commit is
                // tested on the local stack (test/node/group-commit-stack.test.ts).
                GROUP_COMMIT: "off",
                // The fuzzers' run count and seed (test/workers/openapi-fuzz.test.ts); unset in CI.
                FUZZ_RUNS: process.env.FUZZ_RUNS ?? "",
                FUZZ_SEED: process.env.FUZZ_SEED ?? "",
              },
            },
          })),
        ],
        test: {
          name: "workers",
          include: ["test/workers/**/*.test.ts"],
          exclude: gated,
          globalSetup: ["./test/setup/local-services.ts"],
          // Tests of tens of requests one after another (the rate limits' windows) took 12 s alone and past 30 s
          // on a loaded 2-core machine in CI; a hang still fails.
          testTimeout: 90_000,
          hookTimeout: 30_000,
        },
      },
      {
        plugins: [
          stripeWithoutSourceMaps,
          cloudflareTest(async ({ inject }) => {
            const database = {
              DATABASE_URL: inject("sqlConnectionString"),
              NEON_FETCH_ENDPOINT: inject("sqlEndpointUrl"),
            };
            return {
              main: "./functions/stripe-events/index.ts",
              wrangler: { configPath: "./wrangler.stripe-events.toml" },
              miniflare: {
                bindings: {
                  ...database,
                  STRIPE_WEBHOOK_SECRET: testStripeWebhookSecret,
                  // The tracking worker, called in-process with these bindings, hashes devices with it.
                  DEVICE_HASH_KEY: localDeviceHashKey,
                  FUZZ_RUNS: process.env.FUZZ_RUNS ?? "",
                  FUZZ_SEED: process.env.FUZZ_SEED ?? "",
                },
              },
            };
          }),
        ],
        test: {
          // The payments provider's events worker; its tests call the tracking worker's default export
          // in-process for clicks, leads and sales.
          name: "stripe-events",
          include: ["test/stripe-events/**/*.test.ts"],
          exclude: gated,
          globalSetup: ["./test/setup/sql-endpoint-only.ts"],
          testTimeout: 90_000,
          hookTimeout: 30_000,
        },
      },
      ...(withChromium
        ? [
            {
              test: {
                name: "browser",
                environment: "node",
                include: ["test/browser/**/*.test.ts"],
                testTimeout: 60_000,
                hookTimeout: 120_000,
              },
            },
          ]
        : []),
    ],
  },
});
