import { defineConfig } from "vitest/config";

// Two projects: "node" runs the local-stack tools (database endpoint, Upstash REST proxy) and pure rules
// in Node; "workers" runs the workers themselves in workerd (added in vitest.workers.ts).
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
    ],
  },
});
