import type { TestProject } from "vitest/node";
import { startOidcProvider } from "../../dev/oidc-provider.ts";
import { startSqlEndpoint } from "../../dev/sql-endpoint.ts";
import { startConnectStandIn } from "../../dev/stripe-connect-stand-in.ts";
import { startUpstashProxy } from "../../dev/upstash-rest-proxy.ts";
import { TEST_SIGN_IN_CALLBACK } from "../workers/oidc-sign-in.ts";
import { startWebhookReceiver } from "./webhook-receiver.ts";

declare module "vitest" {
  export interface ProvidedContext {
    sqlEndpointUrl: string;
    /** The workers' DATABASE_URL: its password is the SQL endpoint's per-run secret. */
    sqlConnectionString: string;
    databaseBackend: "pglite" | "postgres";
    /** The Upstash REST endpoint in front of the real Redis, when REDIS_URL is set. */
    upstash: { url: string; token: string } | null;
    /** The local OpenID provider (dev/oidc-provider.ts) the workers sign people in with. */
    oidc: { issuer: string; clientId: string; clientSecret: string; cliClientId: string };
    /** The local stand-in of the payments provider's Connect token endpoint (dev/stripe-connect-stand-in.ts). */
    stripeConnect: { host: string; port: number; secretKey: string };
    /** The local webhook receiver (test/setup/webhook-receiver.ts) the workers deliver webhooks to. */
    webhookReceiverUrl: string;
  }
}

/**
 * Starts the local services the workers under test reach over loopback: the Neon-protocol SQL endpoint
 * (in-memory PGlite, or the PostgreSQL of DATABASE_URL) with migrations applied; the local OpenID provider;
 * and, when REDIS_URL is set, the Upstash REST endpoint in front of that Redis.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const databaseUrl = process.env.DATABASE_URL;
  const endpoint = await startSqlEndpoint({
    ...(databaseUrl ? { databaseUrl } : {}),
    migrationsFolder: "migrations",
  });
  project.provide("sqlEndpointUrl", endpoint.url);
  project.provide("sqlConnectionString", endpoint.connectionString);
  project.provide("databaseBackend", endpoint.backend);

  const redisUrl = process.env.REDIS_URL;
  const proxy = redisUrl
    ? await startUpstashProxy({ redisUrl, token: `test-${crypto.randomUUID()}` })
    : undefined;
  project.provide("upstash", proxy ? { url: proxy.url, token: proxy.token } : null);

  // The workers under test answer at https://api.test (SELF.fetch); the callback is theirs.
  const oidc = await startOidcProvider({ port: 0, dashboardRedirectUris: [TEST_SIGN_IN_CALLBACK] });
  project.provide("oidc", {
    issuer: oidc.issuer,
    clientId: oidc.clientId,
    clientSecret: oidc.clientSecret,
    cliClientId: oidc.cliClientId,
  });

  const connectSecretKey = "sk_test_platform_connect_stand_in";
  const connect = await startConnectStandIn({ secretKey: connectSecretKey });
  project.provide("stripeConnect", { host: connect.host, port: connect.port, secretKey: connectSecretKey });

  const receiver = await startWebhookReceiver();
  project.provide("webhookReceiverUrl", receiver.url);

  return async () => {
    await receiver.close();
    await connect.close();
    await oidc.close();
    await proxy?.close();
    await endpoint.close();
  };
}
