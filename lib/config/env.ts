import { z } from "zod";

/**
 * The worker's bindings, validated once per isolate at the entry. Nothing else reads raw env: every
 * module receives the parsed `Config`.
 */
/**
 * The device hash key the local stack and the tests set: public, so never the one a deployment uses. (There is
 * no default: a worker deployed without DEVICE_HASH_KEY stores no device hashes rather than hashes made with
 * a public key, which anyone could match against the IPv4 addresses.)
 */
export const localDeviceHashKey = "local-device-hash-key-not-a-secret";

const EnvSchema = z.object({
  DATABASE_URL: z.string().min(1, "DATABASE_URL is required"),
  /** Local stack only: where the Neon HTTP driver sends SQL (our local Neon-protocol endpoint). */
  NEON_FETCH_ENDPOINT: z.url().optional(),
  UPSTASH_REDIS_REST_URL: z.url().optional(),
  UPSTASH_REDIS_REST_TOKEN: z.string().min(1).optional(),
  /** Where the key-rotation warnings and errors point (`docs_url`, `Link: rel="deprecation"`). */
  DOCS_URL: z.url().default("https://docs.affiliate-tracking.dev/api-keys#rotation"),
  /** The OpenID Connect provider people sign in with (its issuer URL, exactly as in its ID tokens). */
  OIDC_ISSUER: z.url().optional(),
  OIDC_CLIENT_ID: z.string().min(1).optional(),
  OIDC_CLIENT_SECRET: z.string().min(1).optional(),
  /** The dashboard's origin; a command-line login opens its `/cli/login` page. Default: the API's own origin. */
  DASHBOARD_URL: z.url().optional(),
  /** The command-line tool's client at the provider: `auth/callback` also accepts ID tokens issued to it. */
  OIDC_CLI_CLIENT_ID: z.string().min(1).optional(),
  /** The platform's secret key and Connect client id (`ca_...`): the Connect OAuth start and callback. */
  STRIPE_SECRET_KEY: z.string().min(1).optional(),
  STRIPE_CONNECT_CLIENT_ID: z.string().min(1).optional(),
  /** Local stand-in of the provider's Connect token endpoint (tests, offline dev): its host/port/protocol. */
  STRIPE_API_HOST: z.string().min(1).optional(),
  STRIPE_API_PORT: z.coerce.number().int().positive().optional(),
  STRIPE_API_PROTOCOL: z.enum(["http", "https"]).optional(),
  /** Seals the webhook endpoints' signing secrets at rest (`lib/webhooks/secret-box.ts`); set it in production. */
  WEBHOOK_SECRET_KEY: z.string().min(16).optional(),
  /**
   * Keys the device hashes of clicks and browser leads (`lib/fraud/device-hash.ts`), so a stored hash cannot
   * be matched against a list of addresses without it. Unset: no device hashes are stored (see `deviceHashes`).
   */
  DEVICE_HASH_KEY: z.string().min(16).optional(),
  /**
   * `allow`: deliver webhooks without WEBHOOK_SECRET_KEY, their secrets stored unsealed. The local stack and the
   * tests set it; a deployed worker does not, so it delivers nothing until the key is set.
   */
  WEBHOOK_SECRETS_UNSEALED: z.enum(["allow"]).optional(),
  /**
   * `off`: every click, and every read of a lead, a sale or a refund, is sent to the database alone
   * (`lib/db/group-commit.ts`). The workers tests set it: they run the worker inside the test runner's Durable
   * Object, where requests do not overlap as they do in a deployed worker (the group commit's tests use the
   * local stack).
   */
  GROUP_COMMIT: z.enum(["on", "off"]).default("on"),
});

export interface Config {
  databaseUrl: string;
  neonFetchEndpoint: string | undefined;
  upstash: { url: string; token: string } | undefined;
  docsUrl: string;
  dashboardUrl: string | undefined;
  /** Audiences `auth/callback` accepts besides the dashboard client (`OIDC_CLI_CLIENT_ID`). */
  cliClientId: string | undefined;
  /** Unset: the sign-in routes answer 500 (the rest of the service runs without identity). */
  identity: IdentityConfig | undefined;
  /** Unset: the payments provider's Connect OAuth routes answer 500 (the account can still be set directly). */
  stripeConnect: StripeConnectConfig | undefined;
  /** Unset: webhook secrets are stored unsealed (local stack, tests). */
  webhookSecretKey: string | undefined;
  /** HMAC key of the device hashes (fraud signals). Unset: clicks and browser leads are stored without them. */
  deviceHashKey: string | undefined;
  /** Unsealed secrets allowed (`WEBHOOK_SECRETS_UNSEALED=allow`): else no delivery without the key. */
  webhookSecretsUnsealedAllowed: boolean;
  /**
   * Clicks, the reads of leads, sales and refunds, and the writes of server leads, sales and refunds, arriving
   * together are sent as one statement (`GROUP_COMMIT`, default on).
   */
  groupCommit: boolean;
}

export interface StripeConnectConfig {
  secretKey: string;
  clientId: string;
  /** Where the OAuth token exchange goes; unset: the provider's own host. */
  host: string | undefined;
  port: number | undefined;
  protocol: "http" | "https" | undefined;
}

export interface IdentityConfig {
  issuer: string;
  clientId: string;
  clientSecret: string | undefined;
}

export class ConfigError extends Error {
  override name = "ConfigError";
}

const parsed = new WeakMap<object, Config>();

export function readConfig(env: object): Config {
  const cached = parsed.get(env);
  if (cached) return cached;
  const result = EnvSchema.safeParse(env);
  if (!result.success) {
    const problems = result.error.issues.map((issue) => `${issue.path.join(".")}: ${issue.message}`);
    throw new ConfigError(`Invalid worker configuration: ${problems.join("; ")}`);
  }
  const e = result.data;
  if (Boolean(e.UPSTASH_REDIS_REST_URL) !== Boolean(e.UPSTASH_REDIS_REST_TOKEN)) {
    throw new ConfigError("UPSTASH_REDIS_REST_URL and UPSTASH_REDIS_REST_TOKEN must be set together");
  }
  if (Boolean(e.OIDC_ISSUER) !== Boolean(e.OIDC_CLIENT_ID)) {
    throw new ConfigError("OIDC_ISSUER and OIDC_CLIENT_ID must be set together");
  }
  const config: Config = {
    databaseUrl: e.DATABASE_URL,
    neonFetchEndpoint: e.NEON_FETCH_ENDPOINT,
    upstash:
      e.UPSTASH_REDIS_REST_URL && e.UPSTASH_REDIS_REST_TOKEN
        ? { url: e.UPSTASH_REDIS_REST_URL, token: e.UPSTASH_REDIS_REST_TOKEN }
        : undefined,
    docsUrl: e.DOCS_URL,
    identity:
      e.OIDC_ISSUER && e.OIDC_CLIENT_ID
        ? { issuer: e.OIDC_ISSUER, clientId: e.OIDC_CLIENT_ID, clientSecret: e.OIDC_CLIENT_SECRET }
        : undefined,
    dashboardUrl: e.DASHBOARD_URL,
    cliClientId: e.OIDC_CLI_CLIENT_ID,
    stripeConnect:
      e.STRIPE_SECRET_KEY && e.STRIPE_CONNECT_CLIENT_ID
        ? {
            secretKey: e.STRIPE_SECRET_KEY,
            clientId: e.STRIPE_CONNECT_CLIENT_ID,
            host: e.STRIPE_API_HOST,
            port: e.STRIPE_API_PORT,
            protocol: e.STRIPE_API_PROTOCOL,
          }
        : undefined,
    webhookSecretKey: e.WEBHOOK_SECRET_KEY,
    deviceHashKey: e.DEVICE_HASH_KEY,
    webhookSecretsUnsealedAllowed: e.WEBHOOK_SECRETS_UNSEALED === "allow",
    groupCommit: e.GROUP_COMMIT === "on",
  };
  parsed.set(env, config);
  return config;
}

const StripeEventsEnvSchema = z.object({
  STRIPE_WEBHOOK_SECRET: z.string().min(1, "STRIPE_WEBHOOK_SECRET is required"),
});

/** The events worker's configuration: the API worker's, and the signing secret of its webhook endpoint. */
export interface StripeEventsConfig extends Config {
  stripeWebhookSecret: string;
}

const parsedStripeEvents = new WeakMap<object, StripeEventsConfig>();

/** `readConfig` for the events worker (`functions/stripe-events/`): once per isolate, like the API worker's. */
export function readStripeEventsConfig(env: object): StripeEventsConfig {
  const cached = parsedStripeEvents.get(env);
  if (cached) return cached;
  const result = StripeEventsEnvSchema.safeParse(env);
  if (!result.success) {
    const problems = result.error.issues.map((issue) => `${issue.path.join(".")}: ${issue.message}`);
    throw new ConfigError(`Invalid worker configuration: ${problems.join("; ")}`);
  }
  const config = { ...readConfig(env), stripeWebhookSecret: result.data.STRIPE_WEBHOOK_SECRET };
  parsedStripeEvents.set(env, config);
  return config;
}
