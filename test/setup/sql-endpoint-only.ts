import type { TestProject } from "vitest/node";
import { startSqlEndpoint } from "../../dev/sql-endpoint.ts";

/**
 * The events worker's tests need only the Neon-protocol SQL endpoint (PGlite, or the PostgreSQL of
 * DATABASE_URL), started as `local-services.ts` starts it. A second project cannot reuse that file: Vitest
 * evaluates a project's global setup module again, and ioredis (behind its Upstash proxy) cannot be
 * evaluated twice in one process.
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
  project.provide("upstash", null);
  return () => endpoint.close();
}
