import type { NeonQueryFunction } from "@neondatabase/serverless";
import type { BatchItem, BatchResponse } from "drizzle-orm/batch";
import type { NeonHttpDatabase } from "drizzle-orm/neon-http";
import { NeonHttpSession } from "drizzle-orm/neon-http/session";
import { PgDatabase } from "drizzle-orm/pg-core/db";
import { PgDialect } from "drizzle-orm/pg-core/dialect";
import type { TablesRelationalConfig } from "drizzle-orm/relations";
import type { Config } from "../config/env.ts";
import { neonConfig, sqlOverHttp } from "./sql-over-http.ts";

/** No relational schema (see `drizzleOverHttp`): `db.query.<table>` does not exist, and does not type-check. */
export type Database = NeonHttpDatabase<Record<string, never>>;

let cached: { key: string; db: Database } | undefined;

/**
 * One drizzle client over Neon's SQL-over-HTTP protocol per isolate. Every call is one HTTP round trip; a
 * `db.batch([...])` is one round trip and one non-interactive transaction.
 */
export function databaseFor(config: Config): Database {
  const key = `${config.databaseUrl}|${config.neonFetchEndpoint ?? ""}`;
  if (cached?.key === key) return cached.db;
  if (config.neonFetchEndpoint) {
    // Local stack: the same client, pointed at our Neon-protocol endpoint instead of Neon's.
    neonConfig.fetchEndpoint = config.neonFetchEndpoint;
  }
  const db = drizzleOverHttp(config.databaseUrl);
  cached = { key, db };
  return db;
}

/**
 * What `drizzle({ client: neon(url) })` from `drizzle-orm/neon-http` builds, over our client: that entry point
 * imports the driver package for its `neon()` and type parsers, so it would bring the driver back into the
 * bundle. Its session (the part that talks to the client) is used as it is. Without the relational schema:
 * nothing uses `db.query.<table>`, and with it every worker bundled every table of `schema/` (each worker now
 * carries only the tables its code names).
 */
export function drizzleOverHttp(connectionString: string): Database {
  const client = sqlOverHttp(connectionString) as unknown as NeonQueryFunction<false, false>;
  const dialect = new PgDialect();
  const session = new NeonHttpSession(client, dialect, undefined, {});
  return new HttpDatabase(dialect, session, undefined) as unknown as Database;
}

/** `NeonHttpDatabase` without the driver import: a batch is one request run as one transaction. */
type HttpSession = NeonHttpSession<Record<string, unknown>, TablesRelationalConfig>;

class HttpDatabase extends PgDatabase<never, Record<string, never>> {
  private readonly httpSession: HttpSession;

  constructor(dialect: PgDialect, session: HttpSession, relational: unknown) {
    super(dialect, session as never, relational as never);
    this.httpSession = session;
  }

  batch<U extends BatchItem<"pg">, T extends Readonly<[U, ...U[]]>>(batch: T): Promise<BatchResponse<T>> {
    return this.httpSession.batch(batch);
  }
}
