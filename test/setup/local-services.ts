import type { TestProject } from "vitest/node";
import { startSqlEndpoint } from "../../dev/sql-endpoint.ts";
import { startUpstashProxy } from "../../dev/upstash-rest-proxy.ts";

declare module "vitest" {
  export interface ProvidedContext {
    sqlEndpointUrl: string;
    /** The workers' DATABASE_URL: its password is the SQL endpoint's per-run secret. */
    sqlConnectionString: string;
    databaseBackend: "pglite" | "postgres";
    /** The Upstash REST endpoint in front of the real Redis, when REDIS_URL is set. */
    upstash: { url: string; token: string } | null;
  }
}

/**
 * Starts the local services the workers under test reach over loopback: the Neon-protocol SQL endpoint
 * (in-memory PGlite, or the PostgreSQL of DATABASE_URL) with migrations applied, and, when REDIS_URL is
 * set, the Upstash REST endpoint in front of that Redis.
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

  return async () => {
    await proxy?.close();
    await endpoint.close();
  };
}
