import { parameterText, parserFor } from "./pg-text-values.ts";

/**
 * A small client of Neon's SQL-over-HTTP protocol, in place of `@neondatabase/serverless` (whose single-file
 * bundle ships the whole pg and WebSocket client, about 150 KB minified, where only `neon()` was used). It
 * is what `drizzle-orm/neon-http`'s session calls:
 *
 * - `query(sql, params, { arrayMode })` answers a lazy query: it runs when awaited (one `POST`), or goes
 *   into a `transaction([...])`, which sends them all in one `POST` run as one transaction;
 * - the request is `POST <endpoint>` with `{query, params}` or `{queries: [...]}`, the connection string in
 *   `Neon-Connection-String` and rows asked as raw text (`Neon-Raw-Text-Output`, `Neon-Array-Mode`);
 * - a 400 is Postgres refusing the statement: the error carries its `code`, `constraint` and the other
 *   fields (lib/db/errors.ts reads them); any other status or a network failure is an error too.
 */

export interface SqlOverHttpConfig {
  /** Where statements go: a URL, or one made from the connection string's host; default Neon's. */
  fetchEndpoint: string | ((host: string, port: string) => string);
  /** The fetch to use; unset means the global `fetch`, looked up at each call. Tests count round trips here. */
  fetchFunction: typeof fetch | undefined;
}

/** Per isolate, like the driver's `neonConfig` (the local stack points `fetchEndpoint` at dev/sql-endpoint.ts). */
export const neonConfig: SqlOverHttpConfig = {
  fetchEndpoint: (host) => `https://${host.replace(/^[^.]+\./, "api.")}/sql`,
  fetchFunction: undefined,
};

export interface QueryOptions {
  /** Rows as arrays of values (drizzle's selects) rather than objects keyed by column name. */
  arrayMode?: boolean;
  /** Accepted for drizzle's sake: the answer is always the full result. */
  fullResults?: boolean;
}

export interface FieldDescription {
  name: string;
  dataTypeID: number;
}

export interface FullQueryResult {
  command: string;
  rowCount: number | null;
  rows: unknown[];
  fields: FieldDescription[];
  rowAsArray: boolean;
}

interface WireResult {
  command: string;
  rowCount: number | null;
  rows: (string | null)[][];
  fields: FieldDescription[];
}

interface QueryData {
  query: string;
  params: (string | null)[];
}

/**
 * The fields Postgres reports about a refused statement: a 400 body of the protocol carries them (the local
 * endpoint, `dev/sql-endpoint.ts`, writes exactly these), and a refusal keeps them.
 */
export const PG_ERROR_FIELDS = [
  "severity",
  "code",
  "detail",
  "hint",
  "position",
  "internalPosition",
  "internalQuery",
  "where",
  "schema",
  "table",
  "column",
  "dataType",
  "constraint",
  "file",
  "line",
  "routine",
] as const;

/** Named as the driver's error was, so logs read the same. */
export class NeonDbError extends Error {
  override name = "NeonDbError";
  [field: string]: unknown;
}

/** A statement not yet sent: awaiting it sends it alone; `transaction` sends several in one request. */
export class PendingQuery implements PromiseLike<FullQueryResult> {
  constructor(
    private readonly client: SqlOverHttpClient,
    readonly queryData: QueryData,
    readonly options: QueryOptions,
  ) {}

  // biome-ignore lint/suspicious/noThenProperty: a lazy query is a thenable by design (drizzle awaits it)
  then<A = FullQueryResult, B = never>(
    onFulfilled?: ((value: FullQueryResult) => A | PromiseLike<A>) | null,
    onRejected?: ((reason: unknown) => B | PromiseLike<B>) | null,
  ): Promise<A | B> {
    return this.client.send(this.queryData, this.options).then(onFulfilled, onRejected);
  }
}

export interface SqlOverHttpClient {
  query(sql: string, params?: unknown[], options?: QueryOptions): PendingQuery;
  transaction(queries: PendingQuery[], options?: QueryOptions): Promise<FullQueryResult[]>;
  send(data: QueryData, options: QueryOptions): Promise<FullQueryResult>;
}

export function sqlOverHttp(connectionString: string): SqlOverHttpClient {
  const url = parseConnectionString(connectionString);

  async function post(body: unknown): Promise<unknown> {
    const endpoint =
      typeof neonConfig.fetchEndpoint === "function"
        ? neonConfig.fetchEndpoint(url.hostname, url.port)
        : neonConfig.fetchEndpoint;
    const fetchFunction = neonConfig.fetchFunction ?? fetch;
    let response: Response;
    try {
      response = await fetchFunction(endpoint, {
        method: "POST",
        body: JSON.stringify(body),
        headers: {
          "Neon-Connection-String": connectionString,
          "Neon-Raw-Text-Output": "true",
          "Neon-Array-Mode": "true",
        },
      });
    } catch (error) {
      const failure = new NeonDbError(`Error connecting to database: ${error}`);
      failure.sourceError = error;
      throw failure;
    }
    if (response.ok) return response.json();
    if (response.status === 400) {
      const details = (await response.json()) as Record<string, unknown>;
      const refusal = new NeonDbError(String(details.message));
      for (const field of PG_ERROR_FIELDS) refusal[field] = details[field];
      throw refusal;
    }
    throw new NeonDbError(`Server error (HTTP status ${response.status}): ${await response.text()}`);
  }

  const client: SqlOverHttpClient = {
    query: (sql, params = [], options = {}) =>
      new PendingQuery(client, { query: sql, params: params.map(parameterText) }, options),

    async send(data, options) {
      return parseResult((await post(data)) as WireResult, options.arrayMode ?? false);
    },

    async transaction(queries, options = {}) {
      const answer = (await post({ queries: queries.map((q) => q.queryData) })) as { results?: unknown };
      if (!Array.isArray(answer.results))
        throw new NeonDbError("Neon internal error: unexpected result format");
      return answer.results.map((result: WireResult, i) =>
        parseResult(result, queries[i]?.options.arrayMode ?? options.arrayMode ?? false),
      );
    },
  };
  return client;
}

function parseResult(result: WireResult, arrayMode: boolean): FullQueryResult {
  const parsers = result.fields.map((field) => parserFor(field.dataTypeID));
  const names = result.fields.map((field) => field.name);
  const value = (text: string | null, i: number) =>
    text === null ? null : (parsers[i] as (t: string) => unknown)(text);
  const rows = arrayMode
    ? result.rows.map((row) => row.map(value))
    : result.rows.map((row) => Object.fromEntries(row.map((text, i) => [names[i], value(text, i)])));
  return {
    command: result.command,
    rowCount: result.rowCount,
    rows,
    fields: result.fields,
    rowAsArray: arrayMode,
  };
}

function parseConnectionString(connectionString: string): URL {
  try {
    const protocol = new URL(connectionString).protocol;
    // Parsed as http: so the URL class fills host and port the same way whatever the scheme.
    return new URL(`http:${connectionString.slice(protocol.length)}`);
  } catch {
    throw new NeonDbError("Database connection string is not a valid URL");
  }
}
