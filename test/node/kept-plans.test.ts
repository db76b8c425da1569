/**
 * Kept-plan statements (`lib/db/kept-plan.ts`) are written in TypeScript and run as PL/pgSQL functions that
 * migrations create. The migrations must leave each function exactly as its TypeScript says; and the
 * mechanics (one parameter per name however often the statement uses it, result columns named like the
 * statement's own names) must hold on a real database.
 */
import { PGlite } from "@electric-sql/pglite";
import { type SQL, sql } from "drizzle-orm";
import { PgDialect } from "drizzle-orm/pg-core/dialect";
import { drizzle } from "drizzle-orm/pglite";
import { migrate } from "drizzle-orm/pglite/migrator";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type KeptPlanFunction, keptPlanStatement } from "../../lib/db/kept-plan.ts";
import { keptPlanBatch } from "../../lib/db/kept-plan-batch.ts";
import { keptPlanSequence } from "../../lib/db/kept-plan-sequence.ts";
import { keptPlanWriteBatch } from "../../lib/db/kept-plan-write-batch.ts";
import {
  keptPlanBatches,
  keptPlanProcedures,
  keptPlanSequences,
  keptPlanStatements,
  keptPlanWriteBatches,
} from "../../lib/kept-plan-statements.ts";
import { saleAtOnce } from "../../lib/tracking/sale/sale-at-once.ts";
import { saleFactsStatement } from "../../lib/tracking/sale/sale-store.ts";

const dialect = new PgDialect();

/** Runs a call on PGlite as the driver sends it: its values as text. */
function runCall(db: PGlite, call: SQL) {
  const { sql: text, params } = dialect.sqlToQuery(call);
  return db.query<Record<string, unknown>>(
    text,
    params.map((p) => (p === null ? null : String(p))),
  );
}

describe("the migrations define every kept-plan statement as its TypeScript says", () => {
  let db: PGlite;
  beforeAll(async () => {
    db = new PGlite();
    await migrate(drizzle({ client: db }), { migrationsFolder: "migrations" });
  }, 60_000);
  afterAll(() => db.close());

  it("lists the click's statement", () => {
    expect(keptPlanStatements.map((s) => s.functionName)).toContain("record_click_with_dimensions");
  });

  for (const statement of keptPlanStatements) {
    // PostgreSQL checks a function's result types against its statement only when it runs: a later
    // migration changing a column's type would otherwise pass the comparison of texts below.
    it(`${statement.functionName}: the body's result types are the declared ones, on the migrated schema`, async () => {
      const name = `kept_${statement.functionName}`;
      await db.query(`prepare ${name} (${statement.parameterTypes.join(", ")}) as ${statement.body()}`);
      try {
        const { rows } = await db.query<{ result: string[] | null }>(
          "select result_types::text[] as result from pg_prepared_statements where name = $1",
          [name],
        );
        expect(rows[0]?.result ?? []).toEqual(statement.resultTypes);
      } finally {
        await db.query(`deallocate ${name}`);
      }
    });

    it(`${statement.functionName}: source, parameters and result as migrated`, () =>
      expectMigrated(statement));
  }

  for (const sequence of keptPlanSequences) {
    it(`${sequence.functionName}: source, parameters and result as migrated`, () => expectMigrated(sequence));
  }

  for (const batch of keptPlanBatches) {
    it(`${batch.functionName}: source, parameters and result as migrated`, () => expectMigrated(batch));
  }

  for (const batch of keptPlanWriteBatches) {
    it(`${batch.functionName}: source, parameters and result as migrated`, () => expectMigrated(batch));
  }

  for (const procedure of keptPlanProcedures) {
    it(`${procedure.functionName}: source, parameters and result as migrated`, () =>
      expectMigrated(procedure));
  }

  /** The function the migrations leave is the one `definition()` holds, settings included. */
  async function expectMigrated(statement: KeptPlanFunction) {
    const { rows } = await db.query<{ source: string; args: string; result: string; config: string[] }>(
      `select prosrc as source, pg_get_function_arguments(oid) as args, pg_get_function_result(oid) as result,
              proconfig as config
         from pg_proc where proname = $1`,
      [statement.functionName],
    );
    const hint = `a new migration must define it (npm run db:kept-plans -- ${statement.functionName}):\n${statement.definition()}`;
    expect(rows, hint).toHaveLength(1);
    const migrated = rows[0];
    const [, args, result] =
      /^CREATE OR REPLACE FUNCTION \w+\((.*)\)\nRETURNS (.*)\n/.exec(statement.definition()) ?? [];
    expect(migrated?.source, hint).toBe(statement.source());
    expect(migrated?.args, hint).toBe(args);
    // pg_get_function_result prints `TABLE(a x, ...)`, the definition `TABLE (a x, ...)`.
    expect(migrated?.result, hint).toBe(result?.replace(/^TABLE \(/, "TABLE("));
    expect(migrated?.config, hint).toEqual(statement.settings.map((setting) => setting.replace(" = ", "=")));
  }
});

describe("keptPlanStatement", () => {
  // `link` is both a result column (a PL/pgSQL variable) and the statement's own relation; `id` is used twice.
  const statement = keptPlanStatement({
    functionName: "kept_plan_probe",
    names: ["id", "label"],
    parameterTypes: { id: "integer", label: "text" },
    returns: [
      ["link", "json"],
      ["twice", "integer"],
    ],
    build: (q) => sql`
      with link as (select ${q.id}::int as id, ${q.label}::text as label)
      select row_to_json(link) as link, ${q.id}::int * 2 as twice from link`,
  });

  it("numbers the body's parameters by name, once each however often they are used", () => {
    expect(statement.body()).toBe(
      "with link as (select $1::int as id, $2::text as label)\n      select row_to_json(link) as link, $1::int * 2 as twice from link",
    );
  });

  it("calls the function with one parameter per name, in the names' order", () => {
    expect(dialect.sqlToQuery(statement.call({ label: "b", id: 7 }))).toEqual({
      sql: "select * from kept_plan_probe($1, $2)",
      params: [7, "b"],
      typings: ["none", "none"],
    });
    expect(statement.callText()).toBe("select * from kept_plan_probe($1, $2)");
  });

  it("defines a function that runs the statement (PGlite)", async () => {
    const db = new PGlite();
    try {
      await db.exec(statement.definition());
      const { sql: text, params } = dialect.sqlToQuery(statement.call({ id: 21, label: "x" }));
      // Sent as the HTTP driver sends values: text, typed by the function's signature.
      const { rows } = await db.query(text, params.map(String));
      expect(rows).toEqual([{ link: { id: 21, label: "x" }, twice: 42 }]);
    } finally {
      await db.close();
    }
  });

  it("defines a function returning nothing for a statement without results (PGlite)", async () => {
    const insert = keptPlanStatement({
      functionName: "kept_plan_insert_probe",
      names: ["value"],
      parameterTypes: { value: "integer" },
      returns: [],
      build: (q) => sql`insert into probe (value) values (${q.value})`,
    });
    expect(insert.definition()).toContain("\nRETURNS void\n");
    const db = new PGlite();
    try {
      await db.exec("create table probe (value integer)");
      await db.exec(insert.definition());
      const { sql: text, params } = dialect.sqlToQuery(insert.call({ value: 5 }));
      await db.query(text, params.map(String));
      expect((await db.query("select value from probe")).rows).toEqual([{ value: 5 }]);
    } finally {
      await db.close();
    }
  });

  it("refuses a statement holding a value instead of a placeholder", () => {
    const withValue = keptPlanStatement({
      functionName: "kept_plan_value_probe",
      names: ["id"],
      parameterTypes: { id: "integer" },
      returns: [],
      build: (q) => sql`select ${q.id}::int, ${"fixed"}::text`,
    });
    expect(() => withValue.body()).toThrow("kept_plan_value_probe: parameter 2 is not a named placeholder");
  });

  it("refuses a function name that would need quoting", () => {
    expect(() =>
      keptPlanStatement({
        functionName: "Record-Click",
        names: [],
        parameterTypes: {},
        returns: [],
        build: () => sql`select 1`,
      }),
    ).toThrow("function name Record-Click");
  });
});

describe("keptPlanSequence", () => {
  const insert = keptPlanStatement({
    functionName: "sequence_probe_insert",
    names: ["value", "label"],
    parameterTypes: { value: "integer", label: "text" },
    returns: [],
    build: (q) => sql`insert into probe (value, label) values (${q.value}::int, ${q.label}::text)`,
  });
  const guarded = keptPlanStatement({
    functionName: "sequence_probe_guarded",
    names: ["at", "flag"],
    parameterTypes: { at: "timestamp with time zone", flag: "boolean" },
    returns: [],
    build: (q) => sql`insert into probe (value, label)
      select case when ${q.flag}::boolean then -1 else 0 end, to_char(${q.at}::timestamptz at time zone 'UTC', 'YYYY-MM-DD')`,
  });
  const total = keptPlanStatement({
    functionName: "sequence_probe_total",
    names: ["plus"],
    parameterTypes: { plus: "bigint" },
    returns: [
      ["total", "bigint"],
      ["labels", "text"],
    ],
    build: (q) =>
      sql`select sum(value)::bigint + ${q.plus}::bigint as total, string_agg(label, ',' order by label) as labels from probe`,
  });
  const sequence = keptPlanSequence({
    functionName: "sequence_probe",
    steps: { first: insert, second: guarded, total, after: insert },
    returnsFrom: "total",
  });

  async function probeDatabase(): Promise<PGlite> {
    const db = new PGlite();
    await db.exec("create table probe (value integer check (value >= 0), label text)");
    for (const s of [insert, guarded, total]) await db.exec(s.definition());
    await db.exec(sequence.definition());
    return db;
  }

  const run = (db: PGlite, values: Parameters<typeof sequence.call>[0]) => runCall(db, sequence.call(values));

  it("calls the function with one jsonb parameter per step, null for a step that does not run", () => {
    expect(
      dialect.sqlToQuery(sequence.call({ first: { label: "a", value: 2 }, total: { plus: 1 } })),
    ).toEqual({
      sql: "select * from sequence_probe($1, $2, $3, $4)",
      params: ['[2,"a"]', null, "[1]", null],
      typings: ["none", "none", "none", "none"],
    });
    expect(sequence.definition()).toContain("RETURNS TABLE (total bigint, labels text)");
  });

  it("runs the given steps in order, each seeing the writes before it, and returns the chosen step's rows (PGlite)", async () => {
    const db = await probeDatabase();
    try {
      const { rows } = await run(db, {
        first: { value: 2, label: "b" },
        second: { at: "2026-11-25T10:00:00.000Z", flag: false },
        total: { plus: 40 },
        after: { value: 100, label: "z" },
      });
      expect(rows).toEqual([{ total: 42, labels: "2026-11-25,b" }]);
      expect((await db.query("select value from probe order by value")).rows).toEqual([
        { value: 0 },
        { value: 2 },
        { value: 100 },
      ]);
      // Skipped steps write nothing; a lone surrogate is stored as the replacement character, as a parameter of its own was.
      await run(db, { after: { value: 7, label: "x\uD800" } });
      expect((await db.query("select label from probe where value = 7")).rows).toEqual([
        { label: "x\uFFFD" },
      ]);
    } finally {
      await db.close();
    }
  });

  it("aborts the whole call when a step fails: the steps before it are undone (PGlite)", async () => {
    const db = await probeDatabase();
    try {
      await expect(
        run(db, { first: { value: 1, label: "a" }, second: { at: "2026-11-25T10:00:00.000Z", flag: true } }),
      ).rejects.toThrow('violates check constraint "probe_value_check"');
      expect((await db.query("select count(*)::int as n from probe")).rows).toEqual([{ n: 0 }]);
    } finally {
      await db.close();
    }
  });

  it("returns the rows of whichever of several alternative steps ran, and refuses alternatives of other columns", async () => {
    const other = keptPlanStatement({
      functionName: "sequence_probe_other_total",
      names: ["plus"],
      parameterTypes: { plus: "bigint" },
      returns: [
        ["total", "bigint"],
        ["labels", "text"],
      ],
      build: (q) => sql`select ${q.plus}::bigint * 10 as total, 'other'::text as labels`,
    });
    const either = keptPlanSequence({
      functionName: "sequence_probe_either",
      steps: { first: insert, total, other },
      returnsFrom: ["total", "other"],
    });
    expect(either.definition()).toContain("RETURNS TABLE (total bigint, labels text)");
    const db = await probeDatabase();
    try {
      await db.exec(other.definition());
      await db.exec(either.definition());
      const { sql: text, params } = dialect.sqlToQuery(
        either.call({ first: { value: 1, label: "a" }, other: { plus: 4 } }),
      );
      const { rows } = await db.query(
        text,
        params.map((p) => (p === null ? null : String(p))),
      );
      expect(rows).toEqual([{ total: 40, labels: "other" }]);
    } finally {
      await db.close();
    }
    expect(() =>
      keptPlanSequence({
        functionName: "sequence_probe_mixed",
        steps: { insert, total },
        returnsFrom: ["insert", "total"],
      }),
    ).toThrow("sequence_probe_mixed: sequence_probe_total returns other columns than sequence_probe_insert");
  });

  it("refuses a placeholder, a missing value or a number JSON cannot hold for a step", () => {
    expect(() => sequence.call({ total: {} as { plus: number } })).toThrow(
      "sequence_probe_total: no value for plus",
    );
    expect(() => sequence.call({ total: { plus: sql.placeholder("plus") } })).toThrow(
      "sequence_probe_total: plus is not a value",
    );
    expect(() => sequence.call({ total: { plus: Number.NaN } })).toThrow(
      "sequence_probe_total: plus is not a finite number",
    );
  });

  it("gives each step that ran its statement's parameters, as text (npm run plans)", () => {
    const { params } = dialect.sqlToQuery(
      sequence.call({
        first: { value: 2, label: "b" },
        second: { at: "2026-11-25T10:00:00.000Z", flag: true },
      }),
    );
    expect(sequence.stepsOfCall(params as (string | null)[])).toEqual([
      { statement: insert, params: ["2", "b"] },
      { statement: guarded, params: ["2026-11-25T10:00:00.000Z", "true"] },
    ]);
  });
});

describe("keptPlanBatch", () => {
  // `value` is both a parameter name and a result column; the insert's check refuses negative values. `seen`
  // counts the rows before the item's own (a statement does not see its own insert).
  const insert = keptPlanStatement({
    functionName: "batch_probe_insert",
    names: ["value", "label", "at"],
    parameterTypes: { value: "integer", label: "text", at: "timestamp with time zone" },
    returns: [
      ["value", "integer"],
      ["seen", "bigint"],
    ],
    build: (q) => sql`
      with added as (
        insert into probe (value, label, at) values (${q.value}::int, ${q.label}::text, ${q.at}::timestamptz)
        returning value
      )
      select (select value from added) as value, (select count(*) from probe)::bigint as seen`,
  });
  const batch = keptPlanBatch({ functionName: "batch_probe", statement: insert });

  async function probeDatabase(): Promise<PGlite> {
    const db = new PGlite();
    await db.exec("create table probe (value integer check (value >= 0), label text, at timestamptz)");
    await db.exec(insert.definition());
    await db.exec(batch.definition());
    return db;
  }

  const run = (db: PGlite, items: Parameters<typeof batch.call>[0]) => runCall(db, batch.call(items));

  it("calls the function with one jsonb parameter: the items' values in the statement's order", () => {
    expect(
      dialect.sqlToQuery(
        batch.call([
          { value: 1, label: "a", at: null },
          { label: "b", value: 2, at: "2026-11-25T10:00:00.000Z" },
        ]),
      ),
    ).toEqual({
      sql: "select * from batch_probe($1)",
      params: ['[[1,"a",null],[2,"b","2026-11-25T10:00:00.000Z"]]'],
      typings: ["none"],
    });
    expect(batch.definition()).toContain("RETURNS TABLE (batch_item integer, value integer, seen bigint)");
    expect(batch.resultTypes).toEqual(["integer", "integer", "bigint"]);
  });

  it("runs the statement once per item, in order, each seeing the writes before it, and numbers its rows (PGlite)", async () => {
    const db = await probeDatabase();
    try {
      const { rows } = await run(db, [
        { value: 5, label: "a", at: "2026-11-25T10:00:00.000Z" },
        { value: 7, label: "b", at: null },
        { value: 9, label: "c\ud800", at: null },
      ]);
      expect(rows).toEqual([
        { batch_item: 0, value: 5, seen: 0 },
        { batch_item: 1, value: 7, seen: 1 },
        { batch_item: 2, value: 9, seen: 2 },
      ]);
      const stored = await db.query<{ label: string; at: Date | null }>(
        "select label, at from probe order by value",
      );
      expect(stored.rows).toEqual([
        { label: "a", at: new Date("2026-11-25T10:00:00.000Z") },
        { label: "b", at: null },
        // A lone surrogate is stored as U+FFFD, as a value sent alone.
        { label: "c\ufffd", at: null },
      ]);
    } finally {
      await db.close();
    }
  });

  it("aborts the whole call when an item fails: the items before it are undone (PGlite)", async () => {
    const db = await probeDatabase();
    try {
      await expect(
        run(db, [
          { value: 1, label: "a", at: null },
          { value: -1, label: "refused", at: null },
        ]),
      ).rejects.toThrow("probe_value_check");
      const { rows } = await db.query("select * from probe");
      expect(rows).toEqual([]);
    } finally {
      await db.close();
    }
  });

  it("refuses no items, a statement without results, a missing value, and gives each item's parameters as text (npm run plans)", () => {
    expect(() => batch.call([])).toThrow("batch_probe: a batch of no items");
    expect(() => batch.call([{ value: 1, label: "a" } as never])).toThrow(
      "batch_probe_insert: no value for at",
    );
    const silent = keptPlanStatement({
      functionName: "batch_probe_silent",
      names: ["value"],
      parameterTypes: { value: "integer" },
      returns: [],
      build: (q) => sql`insert into probe (value) values (${q.value}::int)`,
    });
    expect(() => keptPlanBatch({ functionName: "batch_probe_silent_all", statement: silent })).toThrow(
      "batch_probe_silent_all: batch_probe_silent returns nothing to tell its items apart",
    );
    const { params } = dialect.sqlToQuery(
      batch.call([
        { value: 1, label: "a", at: null },
        { value: 2, label: "b", at: "2026-11-25T10:00:00.000Z" },
      ]),
    );
    expect(batch.itemsOfCall(params as (string | null)[])).toEqual([
      ["1", "a", null],
      ["2", "b", "2026-11-25T10:00:00.000Z"],
    ]);
  });
});

describe("keptPlanBatch of a read, inlined", () => {
  // A read of one row per call: `label` is used twice, `value` is a parameter and a result column, and one
  // scalar subquery looks a row up by a value (an item whose row is absent gets nulls, as alone).
  const read = keptPlanStatement({
    functionName: "inlined_probe_read",
    names: ["value", "label"],
    parameterTypes: { value: "integer", label: "text" },
    returns: [
      ["value", "integer"],
      ["found", "json"],
      ["echo", "text"],
    ],
    build: (q) => sql`
      select ${q.value}::int as value,
             (select row_to_json(p) from (select label, at from probe where probe.value = ${q.value}::int) p) as found,
             ${q.label}::text || '/' || coalesce(${q.label}::text, '-') as echo`,
  });
  const inlined = keptPlanBatch({ functionName: "inlined_probe", statement: read, inlined: true });
  const looped = keptPlanBatch({ functionName: "looped_probe", statement: read });

  async function probeDatabase(): Promise<PGlite> {
    const db = new PGlite();
    await db.exec("create table probe (value integer primary key, label text, at timestamptz)");
    await db.exec("insert into probe values (1, 'one', '2026-11-29T10:00:00Z'), (3, 'three', null)");
    for (const f of [read, inlined, looped]) await db.exec(f.definition());
    return db;
  }

  it("runs one statement over the items (the read's body, its values from each item) with the read's settings", () => {
    const statement = inlined.inlinedStatement();
    expect(statement).toContain("FROM jsonb_array_elements($1) WITH ORDINALITY AS batch_items");
    expect(statement).toContain("where probe.value = (batch_items.item_values->>0)::integer::int");
    expect(inlined.source()).not.toContain("inlined_probe_read(");
    expect(inlined.settings).toEqual(read.settings);
    expect(inlined.settings).toContain("enable_seqscan = off");
    expect(looped.inlinedStatement()).toBeUndefined();
    expect(looped.source()).toContain("inlined_probe_read(");
    expect(inlined.definition()).toContain(
      "RETURNS TABLE (batch_item integer, value integer, found json, echo text)",
    );
  });

  it("answers each item the row its read answers alone, in the items' order, as the call per item does (PGlite)", async () => {
    const db = await probeDatabase();
    try {
      const items = [
        { value: 3, label: "c" },
        { value: 2, label: null },
        { value: 1, label: "a\ud800" },
        { value: 3, label: "c" },
      ];
      const { rows } = await runCall(db, inlined.call(items));
      const alone = [];
      for (const [i, item] of items.entries()) {
        const [row] = (await runCall(db, read.call(item))).rows;
        alone.push({ batch_item: i, ...row });
      }
      expect(rows).toEqual(alone);
      expect(rows).toEqual([
        { batch_item: 0, value: 3, found: { label: "three", at: null }, echo: "c/c" },
        { batch_item: 1, value: 2, found: null, echo: null },
        {
          batch_item: 2,
          value: 1,
          found: { label: "one", at: "2026-11-29T10:00:00+00:00" },
          echo: "a\ufffd/a\ufffd",
        },
        { batch_item: 3, value: 3, found: { label: "three", at: null }, echo: "c/c" },
      ]);
      expect((await runCall(db, looped.call(items))).rows).toEqual(rows);
    } finally {
      await db.close();
    }
  });

  it("refuses a read with a column named as the statement names the items or its rows", () => {
    for (const name of ["batch_items", "item_values", "item_number", "statement_rows"]) {
      const clash = keptPlanStatement({
        functionName: "inlined_probe_clash",
        names: ["value"],
        parameterTypes: { value: "integer" },
        returns: [[name, "integer"]],
        build: (q) => sql`select ${q.value}::int as ${sql.raw(name)}`,
      });
      expect(() =>
        keptPlanBatch({ functionName: "inlined_probe_all", statement: clash, inlined: true }),
      ).toThrow(`inlined_probe_all: inlined_probe_clash has a column named ${name}`);
      expect(() => keptPlanBatch({ functionName: "looped_probe_all", statement: clash })).not.toThrow();
    }
  });
});

describe("keptPlanWriteBatch", () => {
  // A write of two steps: a log row, then a row whose key is unique and whose value must not be negative; it
  // answers the id and how many rows the probe held before it. An item that fails on the second step must
  // leave no log row either (its subtransaction is rolled back alone).
  const log = keptPlanStatement({
    functionName: "write_probe_log",
    names: ["key"],
    parameterTypes: { key: "text" },
    returns: [],
    build: (q) => sql`insert into probe_log (key) values (${q.key}::text)`,
  });
  const insert = keptPlanStatement({
    functionName: "write_probe_insert",
    names: ["key", "value"],
    parameterTypes: { key: "text", value: "integer" },
    returns: [
      ["id", "integer"],
      ["seen", "bigint"],
    ],
    build: (q) => sql`
      with added as (insert into probe (key, value) values (${q.key}::text, ${q.value}::int) returning id)
      select (select id from added) as id, (select count(*) from probe)::bigint as seen`,
  });
  const sequence = keptPlanSequence({
    functionName: "write_probe",
    steps: { log, insert },
    returnsFrom: "insert",
  });
  const batch = keptPlanWriteBatch({ functionName: "write_probes", sequence });

  async function probeDatabase(): Promise<PGlite> {
    const db = new PGlite();
    await db.exec(`create table probe (id serial primary key, key text constraint probe_key_unique unique,
                                       value integer check (value >= 0));
                   create table probe_log (key text)`);
    for (const s of [log, insert]) await db.exec(s.definition());
    await db.exec(sequence.definition());
    await db.exec(batch.definition());
    return db;
  }

  const run = (db: PGlite, items: Parameters<typeof batch.call>[0]) => runCall(db, batch.call(items));

  it("calls the function with one jsonb parameter: each item's steps' values, null for a step skipped", () => {
    expect(
      dialect.sqlToQuery(
        batch.call([
          { log: { key: "a" }, insert: { key: "a", value: 1 } },
          { insert: { value: 2, key: "b" } },
        ]),
      ),
    ).toEqual({
      sql: "select * from write_probes($1)",
      params: ['[[["a"],["a",1]],[null,["b",2]]]'],
      typings: ["none"],
    });
    expect(batch.definition()).toContain(
      "RETURNS TABLE (batch_item integer, failed_code text, failed_message text, failed_constraint text, id integer, seen bigint)",
    );
    expect(batch.itemsOfCall(['[[["a"],["a",1]],[null,["b",2]]]'])).toEqual([
      ['["a"]', '["a",1]'],
      [null, '["b",2]'],
    ]);
  });

  it("answers each item's row, or the error that rolled back that item alone; the others commit (PGlite)", async () => {
    const db = await probeDatabase();
    try {
      const { rows } = await run(db, [
        { log: { key: "a" }, insert: { key: "a", value: 1 } },
        { log: { key: "a again" }, insert: { key: "a", value: 2 } },
        { log: { key: "negative" }, insert: { key: "n", value: -1 } },
        { log: null, insert: { key: "b", value: 3 } },
      ]);
      expect(rows).toEqual([
        { batch_item: 0, failed_code: null, failed_message: null, failed_constraint: null, id: 1, seen: 0 },
        {
          batch_item: 1,
          failed_code: "23505",
          failed_message: 'duplicate key value violates unique constraint "probe_key_unique"',
          failed_constraint: "probe_key_unique",
          id: null,
          seen: null,
        },
        {
          batch_item: 2,
          failed_code: "23514",
          failed_message: 'new row for relation "probe" violates check constraint "probe_value_check"',
          failed_constraint: "probe_value_check",
          id: null,
          seen: null,
        },
        // Each item sees the writes of those before it that committed, and their sequence numbers used.
        { batch_item: 3, failed_code: null, failed_message: null, failed_constraint: null, id: 4, seen: 1 },
      ]);
      expect((await db.query("select key, value from probe order by id")).rows).toEqual([
        { key: "a", value: 1 },
        { key: "b", value: 3 },
      ]);
      expect((await db.query("select key from probe_log order by key")).rows).toEqual([{ key: "a" }]);
    } finally {
      await db.close();
    }
  });

  it("fails an item whose sequence answers no row, and refuses a sequence that returns none", async () => {
    const db = await probeDatabase();
    try {
      const { rows } = await run(db, [{ log: { key: "only the log" } }]);
      expect(rows).toMatchObject([{ batch_item: 0, failed_code: "P0002", id: null }]);
      expect((await db.query("select key from probe_log")).rows).toEqual([]);
    } finally {
      await db.close();
    }
    const silent = keptPlanSequence({ functionName: "write_probe_silent", steps: { log } });
    expect(() => keptPlanWriteBatch({ functionName: "write_probes_silent", sequence: silent })).toThrow(
      "returns no row",
    );
  });
});

describe("keptPlanProcedure", () => {
  it("passes its values as one JSON array, and names the statements every call runs first with theirs", () => {
    const values = {
      key_hash: "h",
      transaction_id: "pi_1",
      customer_key: null,
      click_id: "clk_1",
      product_id: null,
      amount_cents: 4900,
      tax_cents: null,
      currency: "USD",
      currency_exponent: 2,
      sale_type: "payment",
      line_items: null,
      is_recurring: false,
      subscription_id: null,
      subscription_interval: null,
      occurred_at: null,
      provider: null,
      provider_payment_id: null,
      livemode: null,
      now_at: "2026-11-30T00:00:00.000Z",
    };
    const [item] = saleAtOnce.stepValues(values);
    expect(item).toEqual(saleAtOnce.names.map((name) => values[name]));
    expect(saleAtOnce.callText()).toBe("select * from record_sale_at_once($1)");
    expect(saleAtOnce.stepsOfCall([JSON.stringify(item)])).toEqual([
      { statement: saleFactsStatement, params: ["h", "pi_1", null, "clk_1", null] },
    ]);
    expect(() => saleAtOnce.stepValues({ ...values, amount_cents: Number.NaN })).toThrow(/finite/);
  });
});
