import type { WorkerBindings } from "../../lib/http/app-env.ts";

// The bindings the tests see through `env` from "cloudflare:workers" are the worker's own.
declare global {
  namespace Cloudflare {
    interface Env extends Required<Pick<WorkerBindings, "NOTIFICATIONS">>, WorkerBindings {
      /** The fuzzers' run count and seed (vitest.config.ts passes them from the environment). */
      FUZZ_RUNS?: string;
      FUZZ_SEED?: string;
    }
  }
}
