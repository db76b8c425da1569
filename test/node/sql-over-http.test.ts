import { neonConfig as driverConfig, type NeonQueryFunction, neon } from "@neondatabase/serverless";
import { drizzle } from "drizzle-orm/neon-http";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { type SqlEndpoint, startSqlEndpoint } from "../../dev/sql-endpoint.ts";
import { NeonDbError, neonConfig, sqlOverHttp } from "../../lib/db/sql-over-http.ts";

/**
 * lib/db/sql-over-http.ts replaced `@neondatabase/serverless` in the workers. It must answer what the driver
 * answered as `drizzle-orm/neon-http` configured it, so each case runs through both against the same local
 * endpoint (PGlite; also PostgreSQL when DATABASE_URL is set) and compares, besides checking the values.
 */
const backends: { name: string; databaseUrl?: string }[] = [{ name: "pglite" }];
const envUrl = process.env.DATABASE_URL;
if (envUrl && /^postgres(ql)?:\/\//.test(envUrl)) backends.push({ name: "postgres", databaseUrl: envUrl });

// Building a drizzle database over the driver sets drizzle's type parsers on it (dates stay text, ...).
drizzle({ client: neon("postgres://user:password@localhost/db") });

async function failureOf(promise: PromiseLike<unknown>): Promise<Record<string, unknown> & Error> {
  try {
    await promise;
  } catch (error) {
    return error as Record<string, unknown> & Error;
  }
  throw new Error("expected a failure");
}

describe.each(backends)("SQL-over-HTTP client against the driver ($name)", ({ databaseUrl }) => {
  let endpoint: SqlEndpoint;
  const table = `sqlhttp_${Math.random().toString(36).slice(2, 10)}`;

  beforeAll(async () => {
    endpoint = await startSqlEndpoint({ databaseUrl });
    await endpoint.query(
      `CREATE TABLE ${table} (id int PRIMARY KEY, email text CONSTRAINT ${table}_email_key UNIQUE)`,
    );
  });
  afterAll(async () => {
    await endpoint?.query(`DROP TABLE IF EXISTS ${table}`);
    await endpoint?.close();
  });
  beforeEach(() => {
    neonConfig.fetchEndpoint = endpoint.url;
    driverConfig.fetchEndpoint = endpoint.url;
  });

  const ours = () => sqlOverHttp(endpoint.connectionString);
  const driver = () => neon(endpoint.connectionString);

  it.each([
    ["int4", "42::int", 42],
    ["int2", "-7::smallint", -7],
    ["int8 stays text", "9007199254740993::bigint", "9007199254740993"],
    ["numeric stays text", "12.340::numeric(10,3)", "12.340"],
    ["float8", "1.5::float8", 1.5],
    ["bool true", "true", true],
    ["bool false", "false", false],
    ["text", "'héllo, \"wörld\"'::text", 'héllo, "wörld"'],
    ["null", "NULL::text", null],
    ["timestamptz stays text", "'2024-02-03T04:05:06.789Z'::timestamptz", "2024-02-03 04:05:06.789+00"],
    ["timestamp stays text", "'2024-02-03 04:05:06'::timestamp", "2024-02-03 04:05:06"],
    ["date stays text", "'2024-02-03'::date", "2024-02-03"],
    ["interval stays text", "'1 day 02:00'::interval", "1 day 02:00:00"],
    ["jsonb", `'{"a":[1,"x",null],"b":{"c":true}}'::jsonb`, { a: [1, "x", null], b: { c: true } }],
    ["json", `'[1,2]'::json`, [1, 2]],
    [
      "text[] with quotes, commas, NULL",
      `ARRAY['a', 'b c', NULL, 'd"e', 'f,g', 'NULL', '', 'h\\i']::text[]`,
      ["a", "b c", null, 'd"e', "f,g", "NULL", "", "h\\i"],
    ],
    ["empty text[]", "'{}'::text[]", []],
    ["int4[]", "ARRAY[1, NULL, 3]::int[]", [1, null, 3]],
    ["int8[] stays text", "ARRAY[1, 9007199254740993]::bigint[]", ["1", "9007199254740993"]],
    [
      "nested int4[][]",
      "ARRAY[[1,2],[3,4]]::int[]",
      [
        [1, 2],
        [3, 4],
      ],
    ],
    ["bool[]", "ARRAY[true, false, NULL]", [true, false, null]],
    ["jsonb[]", `ARRAY['{"a":1}'::jsonb, 'null'::jsonb]`, [{ a: 1 }, null]],
    ["uuid", "'5b0ab5d2-2a5a-4b5e-8f3e-0a0b0c0d0e0f'::uuid", "5b0ab5d2-2a5a-4b5e-8f3e-0a0b0c0d0e0f"],
    ["timestamptz[] stays text", "ARRAY['2024-02-03T04:05:06Z'::timestamptz]", '{"2024-02-03 04:05:06+00"}'],
    ["lower-bound array", "'[0:1]={7,8}'::int[]", [7, 8]],
  ])("reads %s as the driver does", async (_name, expression, expected) => {
    const query = `select ${expression} as v, 1 as n`;
    const mine = await ours().query(query, [], { arrayMode: false });
    const theirs = await driver().query(query, [], { arrayMode: false, fullResults: true });
    expect(mine.rows).toEqual(theirs.rows);
    expect(mine.rows).toEqual([{ v: expected, n: 1 }]);
    const mineArrays = await ours().query(query, [], { arrayMode: true });
    const theirArrays = await driver().query(query, [], { arrayMode: true, fullResults: true });
    expect(mineArrays.rows).toEqual(theirArrays.rows);
    expect(mineArrays.rows).toEqual([[expected, 1]]);
    expect(mine.command).toBe(theirs.command);
    expect(mine.rowCount).toBe(theirs.rowCount);
    expect(mine.fields.map((f) => [f.name, f.dataTypeID])).toEqual(
      theirs.fields.map((f) => [f.name, f.dataTypeID]),
    );
  });

  it.each([
    ["a Date", new Date("2024-02-03T04:05:06.789Z")],
    ["a string", 'it\'s "quoted", \\ back'],
    ["null", null],
    ["undefined", undefined],
    ["a boolean", true],
    ["a number", 12.5],
    ["a bigint", 9007199254740993n],
    ["an object", { a: [1, "x"], b: null }],
    ["an array", ["a", null, 'b"c', "d\\e", 3, ["nested"]]],
    ["bytes", new Uint8Array([0, 1, 254, 255])],
  ])("sends %s as the driver does", async (_name, value) => {
    const query = "select $1::text as v";
    const mine = await ours().query(query, [value]);
    const theirs = await driver().query(query, [value], { fullResults: true });
    expect(mine.rows).toEqual(theirs.rows);
  });

  it("runs a transaction as one request, each result in its own mode, and rolls all back on a failure", async () => {
    const client = ours();
    const before = endpoint.stats().requests;
    const results = await client.transaction([
      client.query(`insert into ${table} (id, email) values ($1, $2)`, [1, "a@example.com"]),
      client.query(`select id, email from ${table} where id = $1`, [1], { arrayMode: true }),
      client.query(`select id, email from ${table} where id = $1`, [1], { arrayMode: false }),
    ]);
    expect(endpoint.stats().requests - before).toBe(1);
    expect(results.map((r) => r.rows)).toEqual([
      [],
      [[1, "a@example.com"]],
      [{ id: 1, email: "a@example.com" }],
    ]);
    expect(results[0]?.rowCount).toBe(1);

    const failure = await failureOf(
      client.transaction([
        client.query(`insert into ${table} (id, email) values ($1, $2)`, [2, "b@example.com"]),
        client.query(`insert into ${table} (id, email) values ($1, $2)`, [3, "a@example.com"]),
      ]),
    );
    expect(failure.code).toBe("23505");
    const left = await client.query(`select id from ${table} order by id`);
    expect(left.rows).toEqual([{ id: 1 }]);
  });

  it("sends nothing until a query is awaited", async () => {
    const before = endpoint.stats().requests;
    const pending = ours().query("select 1");
    expect(endpoint.stats().requests).toBe(before);
    await pending;
    expect(endpoint.stats().requests).toBe(before + 1);
  });

  it.each([
    {
      case: "a unique violation",
      run: (c: ReturnType<typeof sqlOverHttp>) =>
        c.query(`insert into ${table} (id, email) values (10, 'dup@example.com'), (11, 'dup@example.com')`),
      runDriver: (d: NeonQueryFunction<false, false>) =>
        d.query(`insert into ${table} (id, email) values (10, 'dup@example.com'), (11, 'dup@example.com')`),
      code: "23505",
      constraint: `${table}_email_key`,
      message: `duplicate key value violates unique constraint "${table}_email_key"`,
    },
    {
      case: "a syntax error",
      run: (c: ReturnType<typeof sqlOverHttp>) => c.query("selec 1"),
      runDriver: (d: NeonQueryFunction<false, false>) => d.query("selec 1"),
      code: "42601",
      constraint: undefined,
      message: 'syntax error at or near "selec"',
    },
    {
      case: "a raised exception",
      run: (c: ReturnType<typeof sqlOverHttp>) =>
        c.query("do $$ begin raise exception 'guard failed: test'; end $$"),
      runDriver: (d: NeonQueryFunction<false, false>) =>
        d.query("do $$ begin raise exception 'guard failed: test'; end $$"),
      code: "P0001",
      constraint: undefined,
      message: "guard failed: test",
    },
  ])("carries Postgres's refusal ($case) with its code and constraint", async (t) => {
    const mine = await failureOf(t.run(ours()));
    const theirs = await failureOf(t.runDriver(driver()));
    expect(mine).toBeInstanceOf(NeonDbError);
    expect(mine.name).toBe("NeonDbError");
    expect(mine.message).toBe(t.message);
    expect(mine.code).toBe(t.code);
    expect(mine.constraint).toBe(t.constraint);
    expect([mine.message, mine.code, mine.constraint, mine.severity]).toEqual([
      theirs.message,
      theirs.code,
      theirs.constraint,
      theirs.severity,
    ]);
  });

  it.each([
    {
      case: "a refused connection string (HTTP 403)",
      connectionString: () => "postgres://app:wrong-secret@db.localtest.me/app",
      url: () => endpoint.url,
      message: /^Server error \(HTTP status 40[13]\): /,
    },
    {
      case: "no endpoint listening",
      connectionString: () => endpoint.connectionString,
      url: () => "http://127.0.0.1:9/sql",
      message: /^Error connecting to database: /,
    },
  ])("fails with the driver's message on $case", async (t) => {
    neonConfig.fetchEndpoint = t.url();
    driverConfig.fetchEndpoint = t.url();
    const mine = await failureOf(sqlOverHttp(t.connectionString()).query("select 1"));
    const theirs = await failureOf(neon(t.connectionString()).query("select 1"));
    expect(mine).toBeInstanceOf(NeonDbError);
    expect(mine.message).toMatch(t.message);
    expect(mine.code).toBeUndefined();
    expect(mine.message.split(": ")[0]).toBe(theirs.message.split(": ")[0]);
  });

  it("refuses a connection string that is not a URL", () => {
    expect(() => sqlOverHttp("not a url")).toThrow(
      new NeonDbError("Database connection string is not a valid URL"),
    );
  });
});
