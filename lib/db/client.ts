import { neon, neonConfig } from "@neondatabase/serverless";
import { drizzle, type NeonHttpDatabase } from "drizzle-orm/neon-http";
import * as schema from "../../schema/index.ts";
import type { Config } from "../config/env.ts";

export type Database = NeonHttpDatabase<typeof schema>;

let cached: { key: string; db: Database } | undefined;

/**
 * One drizzle client over Neon's HTTP driver per isolate. Every call is one HTTP round trip; a
 * `db.batch([...])` is one round trip and one non-interactive transaction.
 */
export function databaseFor(config: Config): Database {
  const key = `${config.databaseUrl}|${config.neonFetchEndpoint ?? ""}`;
  if (cached?.key === key) return cached.db;
  if (config.neonFetchEndpoint) {
    // Local stack: the same driver, pointed at our Neon-protocol endpoint instead of Neon's.
    neonConfig.fetchEndpoint = config.neonFetchEndpoint;
  }
  const db = drizzle({ client: neon(config.databaseUrl), schema });
  cached = { key, db };
  return db;
}
