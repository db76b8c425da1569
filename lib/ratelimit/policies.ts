import type { RateLimitPolicy } from "./types.ts";

const perMinute = (
  name: string,
  limit: number,
  countedPer: RateLimitPolicy["countedPer"],
): RateLimitPolicy => ({
  name,
  limit,
  windowSeconds: 60,
  countedPer,
});

/** Spec section 8, one entry per bucket. */
export const rateLimits = {
  click: perMinute("click", 60, "ip"),
  visit: perMinute("visit", 120, "ip"),
  config: perMinute("config", 60, "ip"),
  lead: perMinute("lead", 30, "ip"),
  /** Sale and refund share one bucket per API key. */
  saleAndRefund: perMinute("sale-refund", 120, "token"),
  readiness: perMinute("readiness", 30, "token"),
  analytics: perMinute("analytics", 30, "token"),
  settingsRead: perMinute("settings-get", 30, "token"),
  settingsWrite: perMinute("settings-patch", 30, "token"),
  cli: perMinute("cli", 60, "token"),
  /**
   * The command line's routes that take no credential (auth start, poll and callback, the retired
   * stripe-connect): per IP, in the bucket of the cli routes' requests without a token, so a made-up Bearer
   * cannot move them out of it.
   */
  cliWithoutCredential: perMinute("cli", 60, "ip"),
  /** Ours (the spec names none): sign-in start and callback, per IP, so no one floods the state table. */
  signIn: perMinute("sign-in", 30, "ip"),
  /** Ours: session, token, sign-out, partners and links routes, per sign-in token. */
  dashboard: perMinute("dashboard", 60, "token"),
  /** Ours: dashboard reads (/api/tracking status, events, performance, readiness, check-test-events). */
  trackingRead: perMinute("tracking-read", 120, "token"),
  /** Ours: dashboard test events and verification chains (the chain also keeps its hourly cap). */
  trackingWrite: perMinute("tracking-write", 20, "token"),
  /** Ours: the dashboard page itself (a navigation per program, group or reload), per sign-in token. */
  dashboardPage: { ...perMinute("dashboard-page", 60, "token"), sessionCookieOnly: true },
} as const satisfies Record<string, RateLimitPolicy>;
