import type { KeyRotation } from "../auth/program-key.ts";
import type { RequestCredential } from "../auth/request-credential.ts";
import type { Clock } from "../clock.ts";
import type { Config } from "../config/env.ts";
import type { Database } from "../db/client.ts";
import type { ErrorPolicy } from "../errors/envelopes.ts";
import type { Logger } from "../log.ts";
import type { RateLimiter } from "../ratelimit/types.ts";
import type { Session } from "./require-session.ts";

/** The worker's raw bindings (validated into `Config` by `readConfig`). */
export interface WorkerBindings {
  DATABASE_URL: string;
  NEON_FETCH_ENDPOINT?: string;
  UPSTASH_REDIS_REST_URL?: string;
  UPSTASH_REDIS_REST_TOKEN?: string;
  DOCS_URL?: string;
  DASHBOARD_URL?: string;
  OIDC_CLI_CLIENT_ID?: string;
  OIDC_ISSUER?: string;
  OIDC_CLIENT_ID?: string;
  OIDC_CLIENT_SECRET?: string;
  STRIPE_SECRET_KEY?: string;
  STRIPE_CONNECT_CLIENT_ID?: string;
  STRIPE_API_HOST?: string;
  STRIPE_API_PORT?: string;
  STRIPE_API_PROTOCOL?: string;
  NOTIFICATIONS?: Queue<unknown>;
  WEBHOOK_SECRET_KEY?: string;
  /** Keys the device hashes of clicks and browser leads (the tracking worker's); unset: none are stored. */
  DEVICE_HASH_KEY?: string;
  /** `allow` on the local stack and in tests only: deliver webhooks without WEBHOOK_SECRET_KEY. */
  WEBHOOK_SECRETS_UNSEALED?: string;
  GROUP_COMMIT?: string;
  /** Webhook deliveries, put on it by the cron and sent by this worker's consumer (`lib/webhooks`). */
  WEBHOOKS?: Queue<unknown>;
  /** The tracking worker (wrangler.console.toml `[[services]]`): the console's test events use its routes. */
  TRACKING?: Fetcher;
  /** The static assets (wrangler.console.toml `[assets]`): the dashboard's script and styles, the docs. */
  ASSETS?: Fetcher;
}

/** Everything a handler needs, built once per request by the `dependencies` middleware. */
export interface Dependencies {
  config: Config;
  db: Database;
  rateLimiter: RateLimiter;
  clock: Clock;
}

export interface AppEnv {
  Bindings: WorkerBindings;
  Variables: {
    deps: Dependencies;
    requestId: string;
    /** The logger bound to this request's id (set with the id by `requestId`). */
    log: Logger;
    errorPolicy: ErrorPolicy;
    /** The allowed origins of the program a browser route resolved, for its CORS answer. */
    corsAllowedOrigins: readonly string[] | undefined;
    /** Set when the request authenticated with a key marked for rotation (see `keyRotationNotice`). */
    keyRotation: KeyRotation | undefined;
    /** The SHA-256 of the Bearer token when it matched a stored key; the rate limiter then counts per key. */
    authenticatedKeyHash: string | undefined;
    /** The parsed Authorization header and its token's hash, once per request (`requestCredential`). */
    credential: RequestCredential | undefined;
    /** The signed-in person on dashboard and settings routes (set by `requireSession`). */
    session: Session | undefined;
    /** The program the signed-in person's membership was checked for in this request (`requireProgramAccess`). */
    programAccessChecked: number | undefined;
    /** Set by the first rate limiter a request meets: a later one (a family's catch-all) does not count it again. */
    rateLimitCounted: boolean | undefined;
    /** Statuses this route answers without `X-Request-ID` (`omitRequestIdOnGet`). */
    requestIdHeaderOmittedOn: readonly number[] | undefined;
  };
}
