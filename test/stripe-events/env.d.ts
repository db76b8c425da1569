// The events worker's own binding, seen by its tests through `env` from "cloudflare:workers".
declare global {
  namespace Cloudflare {
    interface Env {
      STRIPE_WEBHOOK_SECRET: string;
      /** The fuzzer's run count and seed (vitest.config.ts passes them from the environment). */
      FUZZ_RUNS?: string;
      FUZZ_SEED?: string;
    }
  }
}

export {};
