import { cloudflareTest } from "@cloudflare/vitest-pool-workers";
import { defineConfig } from "vitest/config";

// Two projects: "node" runs the local-stack tools (database endpoint, Upstash REST proxy) in Node;
// "workers" runs the API worker in workerd against the local Neon-protocol database endpoint, which the
// global setup starts (PGlite, or the PostgreSQL named by DATABASE_URL) and hands over with `inject`.
export default defineConfig({
  test: {
    projects: [
      {
        test: {
          name: "node",
          environment: "node",
          include: ["test/node/**/*.test.ts"],
          testTimeout: 30_000,
        },
      },
      {
        plugins: [
          cloudflareTest(async ({ inject }) => ({
            main: "./functions/api/index.ts",
            wrangler: { configPath: "./wrangler.toml" },
            miniflare: {
              bindings: {
                DATABASE_URL: "postgres://app:app@db.localtest.me/app",
                NEON_FETCH_ENDPOINT: inject("sqlEndpointUrl"),
              },
            },
          })),
        ],
        test: {
          name: "workers",
          include: ["test/workers/**/*.test.ts"],
          globalSetup: ["./test/setup/local-services.ts"],
          testTimeout: 30_000,
        },
      },
    ],
  },
});
