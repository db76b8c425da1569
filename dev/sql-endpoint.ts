/**
 * Local stand-in for Neon's SQL-over-HTTP endpoint, so the production driver stack
 * (`@neondatabase/serverless` `neon()` + `drizzle-orm/neon-http`) runs unchanged in dev and tests:
 * point `neonConfig.fetchEndpoint` at `endpoint.url`.
 *
 * Backed by embedded PGlite by default, or by a real PostgreSQL through a `pg` Pool when given a
 * `postgres://` URL. Every value goes back as raw Postgres text because the driver parses by
 * dataTypeID itself; letting either backend parse first would hand it JS values it cannot re-parse.
 *
 * Any local process or web page can reach a loopback port, so statements (every POST) need this run's
 * secret: the password of the connection string the driver sends in `Neon-Connection-String`, i.e. the
 * workers' `DATABASE_URL` binding (`endpoint.connectionString`).
 */
import { randomBytes, timingSafeEqual } from "node:crypto";
import { existsSync } from "node:fs";
import { mkdir } from "node:fs/promises";
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import {
  type ParserOptions,
  PGlite,
  types as pgliteTypes,
  type QueryOptions,
  type Results,
  type SerializerOptions,
} from "@electric-sql/pglite";
import { drizzle as drizzleNodePg } from "drizzle-orm/node-postgres";
import { migrate as migrateNodePg } from "drizzle-orm/node-postgres/migrator";
import { drizzle as drizzlePglite } from "drizzle-orm/pglite";
import { migrate as migratePglite } from "drizzle-orm/pglite/migrator";
import pg from "pg";
import { PG_ERROR_FIELDS } from "../lib/db/sql-over-http.ts";
import { type FaultSpec, type FaultState, FaultSwitch } from "./sql-faults.ts";

export interface SqlEndpointOptions {
  port?: number;
  host?: string;
  databaseUrl?: string;
  dataDir?: string;
  migrationsFolder?: string;
  /** The password callers must send; default 256 random bits, new for every start. */
  secret?: string;
  /** Sees every statement the workers send, before it runs (the query-plan check records them). */
  onStatement?: (query: string, params: (string | null)[]) => void;
}

export interface SqlEndpoint {
  url: string;
  port: number;
  backend: "pglite" | "postgres";
  /** The `DATABASE_URL` for the driver: carries the secret as its password (host and names are ignored). */
  connectionString: string;
  stats(): { requests: number; statements: number };
  resetStats(): void;
  /**
   * The fault switch (dev/sql-faults.ts), also at POST /faults/arm|clear|state `{scope, fault}` with the
   * secret: round trips carrying `X-Fault-Scope: <scope>` fail as armed.
   */
  faults: {
    arm(scope: string, fault: FaultSpec): void;
    clear(scope: string): FaultState;
    state(scope: string): FaultState;
  };
  /** Runs outside the HTTP path (not counted in stats); values come back as raw Postgres text or null. */
  query(sql: string, params?: unknown[]): Promise<{ rows: Record<string, unknown>[] }>;
  close(): Promise<void>;
}

type PgText = string | null;

interface FieldInfo {
  name: string;
  dataTypeID: number;
  tableID: number;
  columnID: number;
  dataTypeSize: number;
  dataTypeModifier: number;
  format: "text";
}

interface StatementResult {
  command: string;
  rowCount: number | null;
  rows: PgText[][];
  fields: FieldInfo[];
}

interface Statement {
  query: string;
  params: PgText[];
}

interface Backend {
  kind: "pglite" | "postgres";
  run(sql: string, params: PgText[]): Promise<StatementResult>;
  /** `beforeEach` fires right before each statement is sent, so failed statements are counted too. */
  transaction(statements: Statement[], modes: string[], beforeEach: () => void): Promise<StatementResult[]>;
  close(): Promise<void>;
}

// Bodies carry bulk inserts in dev; anything beyond this is a bug, not a workload.
const MAX_BODY_BYTES = 10 * 1024 * 1024;

// Arbitrary but fixed, so every process migrating the same database contends on the same lock.
const MIGRATION_LOCK_KEY = "7262737465610001";

const ISOLATION_LEVELS: Record<string, string> = {
  readuncommitted: "READ UNCOMMITTED",
  readcommitted: "READ COMMITTED",
  repeatableread: "REPEATABLE READ",
  serializable: "SERIALIZABLE",
};

class BadRequest extends Error {
  constructor(
    message: string,
    readonly status = 400,
  ) {
    super(message);
  }
}

export async function startSqlEndpoint(opts: SqlEndpointOptions = {}): Promise<SqlEndpoint> {
  const host = opts.host ?? "127.0.0.1";
  const usePostgres = opts.databaseUrl !== undefined && /^postgres(ql)?:\/\//i.test(opts.databaseUrl);

  const backend =
    usePostgres && opts.databaseUrl
      ? await openPostgres(opts.databaseUrl, opts.migrationsFolder)
      : await openPglite(opts.dataDir, opts.migrationsFolder);

  const counters = { requests: 0, statements: 0 };
  const faults = new FaultSwitch();
  const secret = opts.secret ?? randomBytes(32).toString("hex");
  const connectionString = `postgres://app:${encodeURIComponent(secret)}@db.localtest.me/app`;

  const server = createServer((req, res) => {
    route(req, res).catch((err: unknown) => sendText(res, 500, errorMessage(err)));
  });

  async function route(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = (req.url ?? "/").split("?", 1)[0];
    const method = req.method ?? "GET";
    if (method === "POST") {
      const refusal = secretRefusal(header(req.headers, "neon-connection-string"), secret);
      if (refusal) return sendJson(res, refusal.status, { message: refusal.message });
    }
    if (path === "/sql") {
      if (method !== "POST") return sendText(res, 405, "POST only");
      return handleSql(req, res);
    }
    if (path?.startsWith("/faults/") && method === "POST") return handleFaults(path.slice(8), req, res);
    if (path === "/stats" && method === "GET") return sendJson(res, 200, { ...counters });
    if (path === "/stats/reset" && method === "POST") {
      counters.requests = 0;
      counters.statements = 0;
      return sendJson(res, 200, { ...counters });
    }
    if (path === "/healthz" && (method === "GET" || method === "HEAD")) {
      return sendJson(res, 200, { ok: true, backend: backend.kind });
    }
    sendText(res, 404, "not found");
  }

  // Behind the secret like every POST: arming a fault is as powerful as running statements.
  async function handleFaults(action: string, req: IncomingMessage, res: ServerResponse): Promise<void> {
    let body: { scope?: unknown; fault?: unknown };
    try {
      body = JSON.parse((await readBody(req)).toString("utf8") || "{}");
    } catch {
      return sendJson(res, 400, { message: "request body is not valid JSON" });
    }
    if (typeof body.scope !== "string" || body.scope === "") {
      return sendJson(res, 400, { message: '"scope" must be a non-empty string' });
    }
    if (action === "arm") {
      try {
        faults.arm(body.scope, body.fault as FaultSpec);
      } catch (err) {
        return sendJson(res, 400, { message: errorMessage(err) });
      }
      return sendJson(res, 200, faults.state(body.scope));
    }
    if (action === "clear") return sendJson(res, 200, faults.clear(body.scope));
    if (action === "state") return sendJson(res, 200, faults.state(body.scope));
    sendText(res, 404, "not found");
  }

  async function handleSql(req: IncomingMessage, res: ServerResponse): Promise<void> {
    counters.requests++;
    const countStatement = () => {
      counters.statements++;
    };
    try {
      const body = parseBody(await readBody(req));
      const arrayMode = header(req.headers, "neon-array-mode") !== "false";
      const statements = "queries" in body ? body.queries : [body];
      for (const s of statements) opts.onStatement?.(s.query, s.params);
      const fault = faults.decide(
        header(req.headers, "x-fault-scope"),
        statements.map((s) => s.query),
      );
      if (fault.kind === "error") return sendJson(res, fault.status, fault.body);
      if (fault.kind === "timeout") {
        await new Promise((resolve) => setTimeout(resolve, fault.delayMs));
        req.socket.destroy();
        return;
      }
      if (fault.kind === "lost") {
        // Run it for real (a batch commits), then drop the answer: the ambiguous outcome of a cut connection.
        if ("queries" in body)
          await backend.transaction(body.queries, transactionModes(req.headers), countStatement);
        else await backend.run(body.query, body.params);
        req.socket.destroy();
        return;
      }
      if ("queries" in body) {
        const modes = transactionModes(req.headers);
        const results = await backend.transaction(body.queries, modes, countStatement);
        sendJson(res, 200, { results: results.map((r) => toWire(r, arrayMode)) });
      } else {
        countStatement();
        const result = await backend.run(body.query, body.params);
        sendJson(res, 200, toWire(result, arrayMode));
      }
    } catch (err) {
      if (err instanceof BadRequest) return sendJson(res, err.status, { message: err.message });
      if (isDatabaseError(err)) return sendJson(res, 400, databaseErrorBody(err));
      console.error("[sql-endpoint] unexpected failure:", err);
      sendText(res, 500, errorMessage(err));
    }
  }

  try {
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(opts.port ?? 0, host, () => {
        server.off("error", reject);
        resolve();
      });
    });
  } catch (err) {
    await backend.close();
    throw err;
  }

  const port = (server.address() as AddressInfo).port;
  const urlHost = host.includes(":") ? `[${host}]` : host;

  let closing: Promise<void> | undefined;
  const close = () => {
    closing ??= (async () => {
      await new Promise<void>((resolve) => {
        // Keep-alive sockets from fetch() would otherwise hold close() open; in-flight requests get a
        // short grace period before being cut.
        const force = setTimeout(() => server.closeAllConnections(), 2_000);
        server.close(() => {
          clearTimeout(force);
          resolve();
        });
        server.closeIdleConnections();
      });
      await backend.close();
    })();
    return closing;
  };

  return {
    url: `http://${urlHost}:${port}/sql`,
    port,
    connectionString,
    backend: backend.kind,
    stats: () => ({ ...counters }),
    faults: {
      arm: (scope, fault) => faults.arm(scope, fault),
      clear: (scope) => faults.clear(scope),
      state: (scope) => faults.state(scope),
    },
    resetStats: () => {
      counters.requests = 0;
      counters.statements = 0;
    },
    async query(sql, params = []) {
      const result = await backend.run(sql, params.map(toPgText));
      return { rows: result.rows.map((row) => rowObject(result.fields, row)) };
    },
    close,
  };
}

// ---------------------------------------------------------------------------------------------
// PGlite

async function openPglite(
  dataDir: string | undefined,
  migrationsFolder: string | undefined,
): Promise<Backend> {
  if (dataDir) await mkdir(dataDir, { recursive: true });
  const db = await PGlite.create(dataDir ? { dataDir } : {});

  try {
    if (migrationsFolder && hasJournal(migrationsFolder)) {
      await migratePglite(drizzlePglite({ client: db }), { migrationsFolder });
    }
  } catch (err) {
    await db.close();
    throw err;
  }

  // PGlite falls back to its built-in parser/serializer for any type id missing from the per-query maps,
  // so identity functions must cover every id it knows. The set grows if array types get refreshed, hence
  // the size check instead of building once.
  let rawOptions: QueryOptions = {};
  let knownTypeCount = -1;
  const options = (): QueryOptions => {
    const count = Object.keys(db.parsers).length + Object.keys(db.serializers).length;
    if (count !== knownTypeCount) {
      knownTypeCount = count;
      const parsers: ParserOptions = {};
      const serializers: SerializerOptions = {};
      for (const key of typeIds(db.parsers, pgliteTypes.parsers)) parsers[key] = (value: string) => value;
      for (const key of typeIds(db.serializers, pgliteTypes.serializers)) {
        // Params are already text; the default json serializer would JSON.stringify them a second time.
        serializers[key] = (value: unknown) => String(value);
      }
      rawOptions = { rowMode: "array", parsers, serializers };
    }
    return rawOptions;
  };

  const toResult = (r: Results<unknown>): StatementResult => ({
    command: r.command ?? "",
    rowCount: r.rowCount ?? null,
    rows: r.rows as PgText[][],
    // PGlite's results keep only name and type; the driver reads nothing else, so fill the rest with
    // what Postgres reports for computed columns.
    fields: r.fields.map((f) => ({
      name: f.name,
      dataTypeID: f.dataTypeID,
      tableID: 0,
      columnID: 0,
      dataTypeSize: -1,
      dataTypeModifier: -1,
      format: "text",
    })),
  });

  return {
    kind: "pglite",
    // query() takes PGlite's transaction mutex, so a single statement can never land inside someone
    // else's open transaction on this one shared session.
    run: async (sql, params) => toResult(await db.query(sql, params, options())),
    transaction: (statements, modes, beforeEach) =>
      db.transaction(async (tx) => {
        if (modes.length > 0) await tx.query(`SET TRANSACTION ${modes.join(", ")}`);
        const results: StatementResult[] = [];
        for (const s of statements) {
          beforeEach();
          results.push(toResult(await tx.query(s.query, s.params, options())));
        }
        return results;
      }),
    close: async () => {
      if (!db.closed) await db.close();
    },
  };
}

function typeIds(...maps: Record<string | number, unknown>[]): number[] {
  const ids = new Set<number>();
  for (const map of maps) {
    for (const key of Object.keys(map)) {
      // The maps also carry entries keyed by JS type name ("string", "bigint"); only OIDs are looked up.
      if (/^\d+$/.test(key)) ids.add(Number(key));
    }
  }
  return [...ids];
}

// ---------------------------------------------------------------------------------------------
// PostgreSQL

type ArrayQuery = pg.QueryArrayConfig & { queryMode: "extended" };

async function openPostgres(databaseUrl: string, migrationsFolder: string | undefined): Promise<Backend> {
  if (migrationsFolder && hasJournal(migrationsFolder)) await migratePostgres(databaseUrl, migrationsFolder);

  const pool = new pg.Pool({
    connectionString: databaseUrl,
    max: 10,
    // Neon sessions run in GMT; matching it keeps timestamptz text identical to production. An `options`
    // parameter in the URL still wins.
    options: "-c TimeZone=UTC",
    types: { getTypeParser: () => (value: string) => value },
  });
  // An idle client dropped by the server must not crash the dev process; the pool replaces it.
  pool.on("error", (err) => console.warn("[sql-endpoint] idle postgres client error:", err.message));

  try {
    await pool.query("SELECT 1");
  } catch (err) {
    await pool.end();
    throw err;
  }

  const exec = async (client: pg.Pool | pg.PoolClient, sql: string, params: PgText[]) => {
    // Extended protocol even without params: Neon rejects multi-statement strings, and so must we, or
    // code that only works locally slips through.
    const config: ArrayQuery = { text: sql, values: params, rowMode: "array", queryMode: "extended" };
    const r = await client.query(config);
    return {
      command: r.command ?? "",
      rowCount: r.rowCount ?? null,
      rows: r.rows as PgText[][],
      fields: r.fields.map((f) => ({
        name: f.name,
        dataTypeID: f.dataTypeID,
        tableID: f.tableID,
        columnID: f.columnID,
        dataTypeSize: f.dataTypeSize,
        dataTypeModifier: f.dataTypeModifier,
        format: "text" as const,
      })),
    };
  };

  let ended = false;
  return {
    kind: "postgres",
    run: (sql, params) => exec(pool, sql, params),
    transaction: async (statements, modes, beforeEach) => {
      const client = await pool.connect();
      let broken: Error | undefined;
      try {
        await client.query(modes.length > 0 ? `BEGIN ${modes.join(", ")}` : "BEGIN");
        const results: StatementResult[] = [];
        for (const s of statements) {
          beforeEach();
          results.push(await exec(client, s.query, s.params));
        }
        await client.query("COMMIT");
        return results;
      } catch (err) {
        try {
          await client.query("ROLLBACK");
        } catch (rollbackErr) {
          // A client that cannot roll back is in an unknown state; destroy it rather than pool it.
          broken = rollbackErr instanceof Error ? rollbackErr : new Error(String(rollbackErr));
        }
        throw err;
      } finally {
        client.release(broken);
      }
    },
    close: async () => {
      if (ended) return;
      ended = true;
      await pool.end();
    },
  };
}

async function migratePostgres(databaseUrl: string, migrationsFolder: string): Promise<void> {
  // Its own client with stock type parsing: drizzle's migrator compares created_at numerically, and the
  // session-level advisory lock has to live on one connection for the whole run.
  const client = new pg.Client({ connectionString: databaseUrl });
  // A connection killed mid-migration already fails the pending query; without a listener it would also
  // crash the process.
  client.on("error", () => {});
  await client.connect();
  try {
    await client.query("SELECT pg_advisory_lock($1::bigint)", [MIGRATION_LOCK_KEY]);
    try {
      await migrateNodePg(drizzleNodePg({ client }), { migrationsFolder });
    } finally {
      // If this fails the connection is gone, and the lock went with it.
      await client.query("SELECT pg_advisory_unlock($1::bigint)", [MIGRATION_LOCK_KEY]).catch(() => {});
    }
  } finally {
    await client.end();
  }
}

function hasJournal(migrationsFolder: string): boolean {
  if (existsSync(join(migrationsFolder, "meta", "_journal.json"))) return true;
  // The schema may not have been generated yet; an empty database is still useful.
  console.warn(`[sql-endpoint] no meta/_journal.json in ${migrationsFolder}; skipping migrations`);
  return false;
}

// ---------------------------------------------------------------------------------------------
// Protocol

function parseBody(raw: Buffer): { query: string; params: PgText[] } | { queries: Statement[] } {
  let body: unknown;
  try {
    body = JSON.parse(raw.toString("utf8"));
  } catch {
    throw new BadRequest("request body is not valid JSON");
  }
  if (!isObject(body)) throw new BadRequest("request body must be a JSON object");
  if ("queries" in body) {
    if (!Array.isArray(body.queries)) throw new BadRequest('"queries" must be an array');
    return { queries: body.queries.map(parseStatement) };
  }
  return parseStatement(body);
}

function parseStatement(value: unknown): Statement {
  if (!isObject(value) || typeof value.query !== "string") {
    throw new BadRequest('each query must be an object with a string "query"');
  }
  const params = value.params ?? [];
  if (!Array.isArray(params)) throw new BadRequest('"params" must be an array');
  return { query: value.query, params: params.map(toPgText) };
}

function transactionModes(headers: IncomingHttpHeaders): string[] {
  const modes: string[] = [];
  const isolation = header(headers, "neon-batch-isolation-level");
  if (isolation !== undefined) {
    const level = ISOLATION_LEVELS[isolation.replace(/[^a-z]/gi, "").toLowerCase()];
    if (!level) throw new BadRequest(`unknown Neon-Batch-Isolation-Level: ${isolation}`);
    modes.push(`ISOLATION LEVEL ${level}`);
  }
  const readOnly = booleanHeader(headers, "neon-batch-read-only");
  if (readOnly !== undefined) modes.push(readOnly ? "READ ONLY" : "READ WRITE");
  const deferrable = booleanHeader(headers, "neon-batch-deferrable");
  if (deferrable !== undefined) modes.push(deferrable ? "DEFERRABLE" : "NOT DEFERRABLE");
  return modes;
}

function booleanHeader(headers: IncomingHttpHeaders, name: string): boolean | undefined {
  const value = header(headers, name);
  if (value === undefined) return undefined;
  if (value === "true") return true;
  if (value === "false") return false;
  throw new BadRequest(`${name} must be "true" or "false"`);
}

/** Why a request without this run's secret is refused, or `null` when it carries it. */
function secretRefusal(
  connectionString: string | undefined,
  secret: string,
): { status: 401 | 403; message: string } | null {
  let password: string;
  try {
    if (!connectionString) throw new Error("absent");
    password = decodeURIComponent(new URL(connectionString).password);
  } catch {
    return {
      status: 401,
      message:
        "Neon-Connection-String is required: the connection string whose password is this endpoint's secret",
    };
  }
  const sent = Buffer.from(password);
  const expected = Buffer.from(secret);
  if (sent.length === expected.length && timingSafeEqual(sent, expected)) return null;
  return { status: 403, message: "The connection string's password is not this endpoint's secret" };
}

function header(headers: IncomingHttpHeaders, name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value[0] : value;
}

function toWire(result: StatementResult, arrayMode: boolean) {
  return {
    command: result.command,
    rowCount: result.rowCount,
    rows: arrayMode ? result.rows : result.rows.map((row) => rowObject(result.fields, row)),
    rowAsArray: arrayMode,
    fields: result.fields,
  };
}

function rowObject(fields: FieldInfo[], row: PgText[]): Record<string, PgText> {
  const out: Record<string, PgText> = {};
  fields.forEach((f, i) => {
    out[f.name] = row[i] ?? null;
  });
  return out;
}

/**
 * Same conversion the neon driver applies client-side (pg's prepareValue), so params that arrive as JSON
 * numbers/objects, or JS values handed to `endpoint.query`, mean what they would in production.
 */
function toPgText(value: unknown): PgText {
  if (value === null || value === undefined) return null;
  if (typeof value === "string") return value;
  if (value instanceof Uint8Array) return `\\x${Buffer.from(value).toString("hex")}`;
  if (value instanceof Date) return value.toISOString();
  if (Array.isArray(value)) return arrayLiteral(value);
  if (typeof value === "object") return JSON.stringify(value);
  return String(value);
}

function arrayLiteral(values: unknown[]): string {
  const items = values.map((v) => {
    if (v === null || v === undefined) return "NULL";
    if (Array.isArray(v)) return arrayLiteral(v);
    return `"${String(toPgText(v)).replace(/\\/g, "\\\\").replace(/"/g, '\\"')}"`;
  });
  return `{${items.join(",")}}`;
}

interface DatabaseErrorLike extends Error {
  code: string;
  severity: string;
}

// Both pg's and PGlite's DatabaseError carry a SQLSTATE plus severity; socket errors have no severity.
function isDatabaseError(err: unknown): err is DatabaseErrorLike {
  return (
    err instanceof Error &&
    typeof (err as Partial<DatabaseErrorLike>).code === "string" &&
    typeof (err as Partial<DatabaseErrorLike>).severity === "string"
  );
}

function databaseErrorBody(err: DatabaseErrorLike): Record<string, unknown> {
  const body: Record<string, unknown> = { message: err.message };
  const source = err as unknown as Record<string, unknown>;
  for (const field of PG_ERROR_FIELDS) {
    if (source[field] !== undefined) body[field] = source[field];
  }
  return body;
}

// ---------------------------------------------------------------------------------------------
// HTTP plumbing

function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const declared = Number(req.headers["content-length"] ?? 0);
    if (declared > MAX_BODY_BYTES) {
      req.resume();
      reject(new BadRequest(`request body exceeds ${MAX_BODY_BYTES} bytes`, 413));
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    let tooLarge = false;
    req.on("data", (chunk: Buffer) => {
      if (tooLarge) return;
      size += chunk.length;
      if (size > MAX_BODY_BYTES) {
        tooLarge = true;
        chunks.length = 0;
        reject(new BadRequest(`request body exceeds ${MAX_BODY_BYTES} bytes`, 413));
        return;
      }
      chunks.push(chunk);
    });
    req.on("end", () => {
      if (!tooLarge) resolve(Buffer.concat(chunks));
    });
    req.on("error", reject);
  });
}

function sendJson(res: ServerResponse, status: number, value: unknown): void {
  if (res.headersSent) return;
  const body = JSON.stringify(value);
  res.writeHead(status, {
    "Content-Type": "application/json",
    "Content-Length": Buffer.byteLength(body),
  });
  res.end(body);
}

function sendText(res: ServerResponse, status: number, text: string): void {
  if (res.headersSent) return;
  res.writeHead(status, {
    "Content-Type": "text/plain; charset=utf-8",
    "Content-Length": Buffer.byteLength(text),
  });
  res.end(text);
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

// ---------------------------------------------------------------------------------------------
// CLI: `tsx dev/sql-endpoint.ts`

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const dataRoot = process.env.DEV_DATA_DIR;
  const endpoint = await startSqlEndpoint({
    databaseUrl: process.env.DATABASE_URL || undefined,
    port: process.env.SQL_PORT ? Number(process.env.SQL_PORT) : undefined,
    dataDir: dataRoot ? join(dataRoot, "pglite") : undefined,
    migrationsFolder: process.env.MIGRATIONS_DIR || fileURLToPath(new URL("../migrations", import.meta.url)),
  });
  console.log(`SQL endpoint (${endpoint.backend}) listening on ${endpoint.url}`);
  const stop = () => {
    endpoint.close().then(
      () => process.exit(0),
      (err: unknown) => {
        console.error(err);
        process.exit(1);
      },
    );
  };
  process.once("SIGINT", stop);
  process.once("SIGTERM", stop);
}
