// The events worker's own binding, seen by its tests through `env` from "cloudflare:workers".
declare global {
  namespace Cloudflare {
    interface Env {
      STRIPE_WEBHOOK_SECRET: string;
    }
  }
}

export {};
