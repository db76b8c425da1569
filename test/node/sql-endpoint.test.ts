import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type NeonQueryFunction, neon, neonConfig } from "@neondatabase/serverless";
import { sql } from "drizzle-orm";
import { drizzle, type NeonHttpDatabase } from "drizzle-orm/neon-http";
import { bigserial, jsonb, pgTable, text, timestamp } from "drizzle-orm/pg-core";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { type SqlEndpoint, startSqlEndpoint } from "../../dev/sql-endpoint.ts";

interface BackendCase {
  name: "pglite" | "postgres";
  databaseUrl?: string;
}

const backends: BackendCase[] = [{ name: "pglite" }];
const envUrl = process.env.DATABASE_URL;
if (envUrl && /^postgres(ql)?:\/\//.test(envUrl)) backends.push({ name: "postgres", databaseUrl: envUrl });

const suffix = () => Math.random().toString(36).slice(2, 10);

interface PgErrorLike {
  code?: string;
  constraint?: string;
  message?: string;
}

// drizzle wraps single-query failures in DrizzleQueryError (original on .cause) but lets batch failures
// through untouched; either way the neon error with the SQLSTATE is somewhere on the chain.
function pgError(err: unknown): PgErrorLike {
  let current: unknown = err;
  while (current instanceof Error) {
    if (typeof (current as PgErrorLike).code === "string") return current as PgErrorLike;
    current = current.cause;
  }
  throw new Error(`no database error in ${String(err)}`);
}

async function rejection(promise: Promise<unknown>): Promise<PgErrorLike> {
  try {
    await promise;
  } catch (err) {
    return pgError(err);
  }
  throw new Error("expected the query to fail");
}

describe.each(backends)("sql endpoint via the neon http driver ($name)", ({ name, databaseUrl }) => {
  const table = `sqlep_items_${suffix()}`;
  const items = pgTable(table, {
    id: bigserial("id", { mode: "number" }).primaryKey(),
    email: text("email").notNull(),
    meta: jsonb("meta"),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
  });

  let endpoint: SqlEndpoint;
  let client: NeonQueryFunction<false, false>;
  let db: NeonHttpDatabase;

  beforeAll(async () => {
    endpoint = await startSqlEndpoint({ databaseUrl });
    await endpoint.query(
      `CREATE TABLE ${table} (
        id bigserial PRIMARY KEY,
        email text NOT NULL CONSTRAINT ${table}_email_key UNIQUE,
        meta jsonb,
        created_at timestamptz NOT NULL DEFAULT now()
      )`,
    );
  });

  afterAll(async () => {
    if (!endpoint) return;
    await endpoint.query(`DROP TABLE IF EXISTS ${table}`);
    await endpoint.close();
  });

  // fetchEndpoint is global to the driver and each backend has its own server, so re-point it per test.
  beforeEach(() => {
    neonConfig.fetchEndpoint = endpoint.url;
    client = neon(endpoint.connectionString);
    db = drizzle({ client });
  });

  it(`runs on ${name}`, () => {
    expect(endpoint.backend).toBe(name);
    expect(endpoint.url).toBe(`http://127.0.0.1:${endpoint.port}/sql`);
  });

  it("returns raw text the driver parses into the right JS types", async () => {
    const doc = {
      plan: "pro",
      tags: ["a", "b"],
      nested: { ok: true, n: 1.5, none: null },
      quote: 'say "hi"',
    };
    const result = await db.execute(sql`
      SELECT 42::int AS int_col,
             9007199254740993::bigint AS big_col,
             'héllo, wörld'::text AS text_col,
             true AS yes_col,
             false AS no_col,
             '2024-02-03T04:05:06.789Z'::timestamptz AS ts_col,
             ${doc}::jsonb AS json_col,
             NULL::text AS null_col,
             ARRAY['a', 'b c', NULL, 'd"e']::text[] AS arr_col
    `);
    expect(result.rows).toEqual([
      {
        int_col: 42,
        big_col: "9007199254740993",
        text_col: "héllo, wörld",
        yes_col: true,
        no_col: false,
        // drizzle's neon-http driver keeps timestamps as strings; both backends run the session in UTC.
        ts_col: "2024-02-03 04:05:06.789+00",
        json_col: doc,
        null_col: null,
        arr_col: ["a", "b c", null, 'd"e'],
      },
    ]);
    expect(result.fields.map((f) => [f.name, f.dataTypeID])).toEqual([
      ["int_col", 23],
      ["big_col", 20],
      ["text_col", 25],
      ["yes_col", 16],
      ["no_col", 16],
      ["ts_col", 1184],
      ["json_col", 3802],
      ["null_col", 25],
      ["arr_col", 1009],
    ]);
  });

  it("round-trips jsonb through params without double encoding", async () => {
    const meta = { source: "test", list: [1, 2, 3] };
    const [row] = await db
      .insert(items)
      .values({ email: `json-${suffix()}@x.test`, meta })
      .returning();
    expect(row?.meta).toEqual(meta);
    const check = await client.query(`SELECT jsonb_typeof(meta) AS t FROM ${table} WHERE id = $1`, [row?.id]);
    expect(check).toEqual([{ t: "object" }]);
  });

  it("inserts with RETURNING through the query builder", async () => {
    const email = `insert-${suffix()}@x.test`;
    const rows = await db.insert(items).values({ email }).returning({ id: items.id, email: items.email });
    expect(rows).toHaveLength(1);
    expect(rows[0]?.email).toBe(email);
    expect(typeof rows[0]?.id).toBe("number");

    const raw = await client.query(`UPDATE ${table} SET meta = '{}' WHERE email = $1`, [email], {
      fullResults: true,
    });
    expect(raw.command).toBe("UPDATE");
    expect(raw.rowCount).toBe(1);
  });

  it("reports unique violations with code 23505 and the constraint name", async () => {
    const email = `dup-${suffix()}@x.test`;
    await db.insert(items).values({ email });
    const err = await rejection(db.insert(items).values({ email }));
    expect(err.code).toBe("23505");
    expect(err.constraint).toBe(`${table}_email_key`);
  });

  it("reports syntax errors as database errors, not server faults", async () => {
    const err = await rejection(client.query("SELEC 1"));
    expect(err.code).toBe("42601");
  });

  it("rejects multi-statement strings like Neon does", async () => {
    const err = await rejection(client.query("SELECT 1; SELECT 2"));
    expect(err.code).toBe("42601");
  });

  it("commits a batch as one transaction and returns one result per statement", async () => {
    const a = `batch-a-${suffix()}@x.test`;
    const b = `batch-b-${suffix()}@x.test`;
    const [insA, insB, count] = await db.batch([
      db.insert(items).values({ email: a }).returning({ email: items.email }),
      db.insert(items).values({ email: b }).returning({ email: items.email }),
      db.execute(sql`SELECT count(*)::int AS n FROM ${items} WHERE email IN (${a}, ${b})`),
    ]);
    expect(insA).toEqual([{ email: a }]);
    expect(insB).toEqual([{ email: b }]);
    expect(count.rows).toEqual([{ n: 2 }]);
  });

  it("rolls back the whole batch when its last statement fails", async () => {
    const existing = `exists-${suffix()}@x.test`;
    await db.insert(items).values({ email: existing });
    const first = `rb-1-${suffix()}@x.test`;
    const second = `rb-2-${suffix()}@x.test`;

    const err = await rejection(
      db.batch([
        db.insert(items).values({ email: first }),
        db
          .update(items)
          .set({ meta: { touched: true } })
          .where(sql`${items.email} = ${existing}`),
        db.insert(items).values({ email: second }),
        db.insert(items).values({ email: existing }),
      ]),
    );
    expect(err.code).toBe("23505");

    const left = await client.query(
      `SELECT email, meta FROM ${table} WHERE email IN ($1, $2, $3) ORDER BY email`,
      [first, second, existing],
    );
    expect(left).toEqual([{ email: existing, meta: null }]);
  });

  it("honours the batch transaction headers (read only)", async () => {
    const err = await rejection(
      client.transaction((tx) => [tx`INSERT INTO ${tx.unsafe(table)} (email) VALUES (${"ro@x.test"})`], {
        isolationLevel: "Serializable",
        readOnly: true,
      }),
    );
    expect(err.code).toBe("25006");

    const [rows] = await client.transaction(
      (tx) => [tx`SELECT current_setting('transaction_isolation') AS iso`],
      {
        isolationLevel: "RepeatableRead",
      },
    );
    expect(rows).toEqual([{ iso: "repeatable read" }]);
  });

  it("lets exactly one of 10 concurrent batches claim the same unique key", async () => {
    const key = `race-${suffix()}@x.test`;
    const tag = suffix();
    const outcomes = await Promise.allSettled(
      Array.from({ length: 10 }, (_, i) =>
        db.batch([
          db.insert(items).values({ email: `race-side-${tag}-${i}@x.test` }),
          db.insert(items).values({ email: key }),
        ]),
      ),
    );
    const failed = outcomes.filter((o): o is PromiseRejectedResult => o.status === "rejected");
    expect(outcomes.filter((o) => o.status === "fulfilled")).toHaveLength(1);
    expect(failed).toHaveLength(9);
    for (const f of failed) expect(pgError(f.reason).code).toBe("23505");

    // The losers' first statements must have been rolled back with them.
    const sides = await endpoint.query(`SELECT count(*) AS n FROM ${table} WHERE email LIKE $1`, [
      `race-side-${tag}-%`,
    ]);
    expect(sides.rows).toEqual([{ n: "1" }]);
  });

  it("counts requests and statements, also over HTTP", async () => {
    endpoint.resetStats();
    await db.execute(sql`SELECT 1`);
    await client.query("SELECT 2");
    await db.batch([db.execute(sql`SELECT 3`), db.execute(sql`SELECT 4`), db.execute(sql`SELECT 5`)]);
    await rejection(client.query("SELECT nope"));
    expect(endpoint.stats()).toEqual({ requests: 4, statements: 6 });

    const base = endpoint.url.replace(/\/sql$/, "");
    const overHttp = await fetch(`${base}/stats`);
    expect(overHttp.headers.get("content-type")).toBe("application/json");
    expect(await overHttp.json()).toEqual({ requests: 4, statements: 6 });

    const reset = await fetch(`${base}/stats/reset`, {
      method: "POST",
      headers: { "Neon-Connection-String": endpoint.connectionString },
    });
    expect(reset.status).toBe(200);
    expect(endpoint.stats()).toEqual({ requests: 0, statements: 0 });

    expect((await fetch(`${base}/healthz`)).status).toBe(200);
  });

  it("answers malformed requests with 400 and a message", async () => {
    const res = await fetch(endpoint.url, {
      method: "POST",
      headers: { "Neon-Connection-String": endpoint.connectionString },
      body: "{not json",
    });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { message: string }).message).toMatch(/JSON/);
  });

  it("seeds and reads through endpoint.query with JS values", async () => {
    const email = `seed-${suffix()}@x.test`;
    await endpoint.query(`INSERT INTO ${table} (email, meta) VALUES ($1, $2)`, [
      email,
      { seeded: [1, "two"] },
    ]);
    const { rows } = await endpoint.query(
      `SELECT meta, meta->'seeded'->>1 AS second FROM ${table} WHERE email = $1`,
      [email],
    );
    expect(rows).toHaveLength(1);
    expect(JSON.parse(String(rows[0]?.meta))).toEqual({ seeded: [1, "two"] });
    expect(rows[0]?.second).toBe("two");
  });

  if (name === "postgres") {
    it("runs concurrent requests in parallel on Postgres", async () => {
      const started = Date.now();
      await Promise.all(Array.from({ length: 5 }, () => client.query("SELECT pg_sleep(0.4)")));
      // Serialised this would take 2s; pool size 10 lets all five sleep at once.
      expect(Date.now() - started).toBeLessThan(1_500);
    });
  }
});

/** A one-migration drizzle-kit folder: creates "widgets" and seeds one row, so a second apply would show. */
async function writeMigrations(folder: string): Promise<string> {
  await mkdir(join(folder, "meta"), { recursive: true });
  await writeFile(
    join(folder, "0000_first.sql"),
    'CREATE TABLE "widgets" ("id" serial PRIMARY KEY, "name" text NOT NULL);\n--> statement-breakpoint\nINSERT INTO "widgets" ("name") VALUES (\'seed\');\n',
  );
  await writeFile(
    join(folder, "meta", "_journal.json"),
    JSON.stringify({
      version: "7",
      dialect: "postgresql",
      entries: [{ idx: 0, version: "7", when: 1_700_000_000_000, tag: "0000_first", breakpoints: true }],
    }),
  );
  return folder;
}

describe("sql endpoint lifecycle (pglite)", () => {
  let dir: string;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "sql-endpoint-test-"));
  });

  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it("applies drizzle migrations with standard bookkeeping and skips folders without a journal", async () => {
    const migrations = await writeMigrations(join(dir, "migrations"));
    const endpoint = await startSqlEndpoint({ migrationsFolder: migrations });
    try {
      expect((await endpoint.query('SELECT name FROM "widgets"')).rows).toEqual([{ name: "seed" }]);
      expect((await endpoint.query("SELECT created_at FROM drizzle.__drizzle_migrations")).rows).toEqual([
        { created_at: "1700000000000" },
      ]);
    } finally {
      await endpoint.close();
    }

    const empty = join(dir, "no-journal");
    await mkdir(empty, { recursive: true });
    const bare = await startSqlEndpoint({ migrationsFolder: empty });
    await bare.close();
  });

  it("persists PGlite data in dataDir across restarts, and close() is idempotent", async () => {
    const dataDir = join(dir, "pglite");
    const first = await startSqlEndpoint({ dataDir });
    await first.query("CREATE TABLE kept (v text)");
    await first.query("INSERT INTO kept VALUES ($1)", ["still here"]);
    await Promise.all([first.close(), first.close()]);
    await first.close();

    const second = await startSqlEndpoint({ dataDir });
    try {
      expect((await second.query("SELECT v FROM kept")).rows).toEqual([{ v: "still here" }]);
    } finally {
      await second.close();
    }
  });
});

const postgresCase = backends.find((b) => b.name === "postgres");
if (postgresCase?.databaseUrl) {
  const adminUrl = postgresCase.databaseUrl;

  // Migrations write drizzle.__drizzle_migrations; doing that in the shared test database would make the
  // real migrations look already applied, so this runs in a throwaway database.
  describe("sql endpoint migrations (postgres)", () => {
    const scratchName = `sqlep_scratch_${suffix()}`;
    const scratchUrl = (() => {
      const url = new URL(adminUrl);
      url.pathname = `/${scratchName}`;
      return url.toString();
    })();
    let admin: SqlEndpoint;
    let dir: string;

    beforeAll(async () => {
      admin = await startSqlEndpoint({ databaseUrl: adminUrl });
      await admin.query(`CREATE DATABASE ${scratchName}`);
      dir = await mkdtemp(join(tmpdir(), "sql-endpoint-pg-test-"));
    });

    afterAll(async () => {
      await admin?.query(`DROP DATABASE IF EXISTS ${scratchName} WITH (FORCE)`);
      await admin?.close();
      if (dir) await rm(dir, { recursive: true, force: true });
    });

    it("applies migrations exactly once when several endpoints start at the same time", async () => {
      const migrationsFolder = await writeMigrations(join(dir, "migrations"));
      const started = await Promise.allSettled(
        Array.from({ length: 4 }, () => startSqlEndpoint({ databaseUrl: scratchUrl, migrationsFolder })),
      );
      const endpoints = started.flatMap((s) => (s.status === "fulfilled" ? [s.value] : []));
      try {
        for (const s of started) if (s.status === "rejected") throw s.reason;
        const [first] = endpoints;
        expect(first?.backend).toBe("postgres");
        expect((await first?.query('SELECT name FROM "widgets"'))?.rows).toEqual([{ name: "seed" }]);
        expect((await first?.query("SELECT created_at FROM drizzle.__drizzle_migrations"))?.rows).toEqual([
          { created_at: "1700000000000" },
        ]);
      } finally {
        await Promise.all(endpoints.map((e) => e.close()));
      }
    });
  });
}

describe("sql endpoint: the per-run secret", () => {
  let endpoint: SqlEndpoint;
  beforeAll(async () => {
    endpoint = await startSqlEndpoint();
  });
  afterAll(async () => {
    await endpoint?.close();
  });

  const query = JSON.stringify({ query: "SELECT 1 AS one", params: [] });
  const withPassword = (password: string) => {
    const url = new URL(endpoint.connectionString);
    url.password = password;
    return url.href;
  };

  it("puts a random secret of at least 128 bits in the connection string's password", async () => {
    const other = await startSqlEndpoint();
    try {
      const secret = new URL(endpoint.connectionString).password;
      expect(secret).toMatch(/^[0-9a-f]{32,}$/);
      expect(new URL(other.connectionString).password).not.toBe(secret);
    } finally {
      await other.close();
    }
  });

  it.each([
    {
      name: "no connection string",
      headers: (): Record<string, string> => ({}),
      status: 401,
      message:
        "Neon-Connection-String is required: the connection string whose password is this endpoint's secret",
    },
    {
      name: "a connection string that is not a URL",
      headers: () => ({ "Neon-Connection-String": "not a url" }),
      status: 401,
      message:
        "Neon-Connection-String is required: the connection string whose password is this endpoint's secret",
    },
    {
      name: "the wrong password",
      headers: () => ({ "Neon-Connection-String": withPassword("guess") }),
      status: 403,
      message: "The connection string's password is not this endpoint's secret",
    },
    {
      name: "no password",
      headers: () => ({ "Neon-Connection-String": withPassword("") }),
      status: 403,
      message: "The connection string's password is not this endpoint's secret",
    },
  ])("refuses a statement with $name ($status) and runs nothing", async ({ headers, status, message }) => {
    endpoint.resetStats();
    for (const path of ["/sql", "/stats/reset"]) {
      const response = await fetch(endpoint.url.replace(/\/sql$/, path), {
        method: "POST",
        headers: { "Content-Type": "application/json", ...headers() },
        body: query,
      });
      expect(response.status).toBe(status);
      expect(await response.json()).toEqual({ message });
    }
    expect(endpoint.stats()).toEqual({ requests: 0, statements: 0 });
  });

  it("runs the statement of a request carrying the secret", async () => {
    const response = await fetch(endpoint.url, {
      method: "POST",
      headers: { "Neon-Connection-String": endpoint.connectionString, "Neon-Array-Mode": "true" },
      body: query,
    });
    expect(response.status).toBe(200);
    expect(((await response.json()) as { rows: unknown[] }).rows).toEqual([["1"]]);
  });

  it("takes a given secret", async () => {
    const given = await startSqlEndpoint({ secret: "0123456789abcdef0123456789abcdef" });
    try {
      expect(new URL(given.connectionString).password).toBe("0123456789abcdef0123456789abcdef");
    } finally {
      await given.close();
    }
  });
});
