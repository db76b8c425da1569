import { neon, neonConfig } from "@neondatabase/serverless";
import { drizzle } from "drizzle-orm/neon-http";
import { type SqlEndpoint, startSqlEndpoint } from "../dev/sql-endpoint.ts";
import type { Database } from "../lib/db/client.ts";
import * as schema from "../schema/index.ts";

/**
 * The service's own database client (Neon's HTTP driver, as the workers use it) over the local
 * Neon-protocol endpoint in front of a PostgreSQL, after applying this project's migrations to it.
 */
export async function openLocalDatabase(
  databaseUrl: string,
): Promise<{ db: Database; endpoint: SqlEndpoint }> {
  const endpoint = await startSqlEndpoint({ databaseUrl, migrationsFolder: "migrations" });
  neonConfig.fetchEndpoint = endpoint.url;
  const db = drizzle({ client: neon(endpoint.connectionString), schema });
  return { db, endpoint };
}

export function requirePostgresUrl(name: string, value: string | undefined): string {
  if (!value || !/^postgres(ql)?:\/\//i.test(value)) {
    console.error(`set ${name} to a postgres:// URL`);
    process.exit(2);
  }
  return value;
}
