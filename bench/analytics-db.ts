import { type SqlEndpoint, startSqlEndpoint } from "../dev/sql-endpoint.ts";
import { type Database, drizzleOverHttp } from "../lib/db/client.ts";
import { neonConfig } from "../lib/db/sql-over-http.ts";

/**
 * The service's own database client (the SQL-over-HTTP client the workers use) over a local Neon-protocol
 * endpoint in front of a PostgreSQL, after applying this project's migrations to it. Each endpoint is found by
 * the port written into its connection string, so several can be open at once (the analytics bench times
 * two data sets side by side).
 */
export async function openLocalDatabase(
  databaseUrl: string,
): Promise<{ db: Database; endpoint: SqlEndpoint }> {
  const endpoint = await startSqlEndpoint({ databaseUrl, migrationsFolder: "migrations" });
  const endpointUrl = new URL(endpoint.url);
  neonConfig.fetchEndpoint = (_host, port) => `${endpointUrl.protocol}//${endpointUrl.hostname}:${port}/sql`;
  const connection = new URL(endpoint.connectionString);
  connection.port = endpointUrl.port;
  return { db: drizzleOverHttp(connection.href), endpoint };
}

export function requirePostgresUrl(name: string, value: string | undefined): string {
  if (!value || !/^postgres(ql)?:\/\//i.test(value)) {
    console.error(`set ${name} to a postgres:// URL`);
    process.exit(2);
  }
  return value;
}
