import { type Placeholder, type SQL, sql } from "drizzle-orm";
import { type PreparedValue, preparedSql, render } from "./prepared-sql.ts";

/**
 * What every PL/pgSQL function written from TypeScript has (a kept statement, a sequence of them, a batch of
 * them, a write batch of a sequence): a migration creates it from `definition()`, and `test/node/kept-plans.test.ts` compares the function
 * the migrations leave with it.
 */
export interface KeptPlanFunction {
  readonly functionName: string;
  /** The call's text, as sent (`npm run plans` knows a function by it). */
  callText(): string;
  /** The function's parameter types, in order (`npm run plans` prepares a kept statement's body with them). */
  readonly parameterTypes: readonly string[];
  /** The types of the function's result columns, in order (none for `RETURNS void`). */
  readonly resultTypes: readonly string[];
  /** The function's result columns and their types, in order (none for `RETURNS void`). */
  readonly resultColumns: readonly (readonly [column: string, type: string])[];
  /** The settings the function runs with, in order (`name = value`, as its definition sets them). */
  readonly settings: readonly string[];
  /** The function's source: what `prosrc` holds once a migration ran `definition()`. */
  source(): string;
  /** `CREATE OR REPLACE FUNCTION ...`, as a migration holds it. */
  definition(): string;
}

/** A kept-plan function's `CREATE OR REPLACE FUNCTION ...`, as a migration holds it. */
export function functionDefinition(
  f: Pick<KeptPlanFunction, "functionName" | "parameterTypes" | "resultColumns" | "settings" | "source">,
): string {
  const result =
    f.resultColumns.length > 0
      ? `TABLE (${f.resultColumns.map(([column, type]) => `${column} ${type}`).join(", ")})`
      : "void";
  return (
    `CREATE OR REPLACE FUNCTION ${f.functionName}(${f.parameterTypes.join(", ")})\n` +
    `RETURNS ${result}\n` +
    `LANGUAGE plpgsql ${f.settings.map((setting) => `SET ${setting}`).join(" ")} AS ` +
    `${SOURCE_QUOTE}${f.source()}${SOURCE_QUOTE};`
  );
}

/**
 * A statement whose plan PostgreSQL keeps: written here in TypeScript like any other statement (drizzle's
 * table and column references, checked by the compiler), and run as the body of a PL/pgSQL function that a
 * migration creates from `definition()`. The worker sends only the call, `select * from name($1, ..., $n)`.
 *
 * Why: a statement sent over HTTP is never prepared (Neon's endpoint and the local one alike), so PostgreSQL
 * parses and plans it again on every request; for a write path that is most of the database's CPU. A
 * PL/pgSQL function's statements are parsed once per connection and their plans kept, and pooled
 * connections live long. The function is created with `plan_cache_mode = force_generic_plan`: left to
 * choose, PostgreSQL plans each call anew for the values given ("custom plans") whenever it estimates the
 * generic plan dearer, as it did for the readiness statement (its database CPU per request: 2.9 ms custom,
 * 2.2 ms generic), and then nothing is kept but the parse.
 *
 * The function must say exactly what this file says: `test/node/kept-plans.test.ts` compares each kept
 * statement's definition with the function the migrations leave, and fails, printing the definition to put in
 * a new migration, when they differ. `npm run plans` explains the body's generic plan (the plan the function
 * runs), not the call.
 */
export interface KeptPlanStatement<Names extends readonly string[]> extends KeptPlanFunction {
  /** The parameters' names, in the function's order. */
  readonly names: Names;
  /** The call the worker sends, one parameter per name in the order of `names`. */
  call(values: { [Name in Names[number]]: PreparedValue }): SQL;
  /** The statement as the function runs it: `$k` is the function's k-th parameter (the k-th name). */
  body(): string;
  /**
   * The statement with each parameter written as `parameter(position)` instead (position from 0, in the
   * order of `names`): the statement inlined where its values come from elsewhere (`kept-plan-batch.ts`).
   */
  bodyWith(parameter: (position: number) => string): string;
}

export interface KeptPlanSpec<Names extends readonly string[]> {
  /** The PL/pgSQL function holding the statement. */
  functionName: string;
  /** The parameters, in the function's order. */
  names: Names;
  /** Each parameter's PostgreSQL type, as `pg_get_function_arguments` prints it (`integer`, not `int`). */
  parameterTypes: { [Name in Names[number]]: string };
  /**
   * The statement's result columns and their types, in order (the function's `RETURNS TABLE`); none for a
   * statement that returns no rows (`RETURNS void`: the call answers one row, which callers ignore). Written
   * by hand: PostgreSQL checks them against the statement only when the function runs, so the test prepares
   * each body on the migrated schema and compares its result types with these.
   */
  returns: readonly (readonly [column: string, type: string])[];
  /** The statement, built once from a placeholder per name (as `preparedSql`'s `build`). */
  build: (params: { [Name in Names[number]]: Placeholder<Name> }) => SQL;
  /**
   * False for a statement that must read a table whole: it then runs with sequential scans allowed (see
   * `INDEX_LOOKUPS_ONLY`). Default true.
   */
  indexLookupsOnly?: boolean;
}

/** The dollar quote of a kept-plan function's source (a statement holding it is refused). */
export const SOURCE_QUOTE = "$kept$";

/** A function name that needs no quoting. */
export function checkedFunctionName(functionName: string): string {
  if (!/^[a-z_][a-z0-9_]*$/.test(functionName)) throw new Error(`function name ${functionName}`);
  return functionName;
}

/**
 * The statement's k-th parameter (from 0) taken from `array`, a JSON array of its values in its order (a
 * sequence's step, a batch's item): `(array->>k)::type`, as its function would have received it.
 */
export function valueFromJsonArray(
  statement: Pick<KeptPlanFunction, "parameterTypes">,
  array: string,
  k: number,
) {
  return `(${array}->>${k})::${statement.parameterTypes[k]}`;
}

/**
 * The settings kept-plan functions run with, in order (`pg_proc.proconfig` holds them):
 *
 * - generic plans (above), every function;
 * - no sequential scan where an index can serve, every function but those whose statement must read a table
 *   whole (`indexLookupsOnly: false`). A kept plan lives as long as its connection, or until `analyze`
 *   changes the table's statistics; planned while a table is small (a new database, or the bench's fresh
 *   one, whose server runs without autovacuum), a lookup chose to read the whole table and kept reading it
 *   as the table grew: the sale's ids link read every id of its namespace (`pg_stat_user_tables` counted
 *   9.8M rows read by 5,879 sequential scans of `payment_aliases` in a 5 s sale run). The tracking
 *   statements are index lookups by design (`npm run plans` checks it), so this only keeps them so. Where a
 *   sequential scan cannot be avoided, the setting costs every plan alike and PostgreSQL may pick a far worse
 *   one: the readiness read, which reads every key of the program, took 845 ms instead of 2 ms with it.
 */
export const GENERIC_PLANS = "plan_cache_mode = force_generic_plan";
export const INDEX_LOOKUPS_ONLY = "enable_seqscan = off";

export function keptPlanStatement<const Names extends readonly string[]>(
  spec: KeptPlanSpec<Names>,
): KeptPlanStatement<Names> {
  const { functionName, names, parameterTypes, returns, build } = spec;
  const settings = spec.indexLookupsOnly === false ? [GENERIC_PLANS] : [GENERIC_PLANS, INDEX_LOOKUPS_ONLY];
  checkedFunctionName(functionName);

  const buildCall = (q: { [Name in Names[number]]: Placeholder<Name> }) =>
    sql`select * from ${sql.raw(functionName)}(${sql.join(
      names.map((name: Names[number]) => q[name]),
      sql`, `,
    )})`;
  const call = preparedSql(names, buildCall);

  const bodyWith = (parameter: (position: number) => string): string => {
    // drizzle numbers every use of a placeholder as a parameter of its own; the function has one per name.
    const { pieces, order } = render(names, build);
    let text = pieces[0]?.value.join("") ?? "";
    for (let i = 0; i < order.length; i++) {
      const position = names.indexOf(order[i] as Names[number]);
      // A value written into `build` instead of a placeholder: the function would hold `$0`.
      if (position < 0) throw new Error(`${functionName}: parameter ${i + 1} is not a named placeholder`);
      text += `${parameter(position)}${pieces[i + 1]?.value.join("") ?? ""}`;
    }
    text = text.trim();
    if (text.includes(SOURCE_QUOTE)) throw new Error(`${SOURCE_QUOTE} in ${functionName}'s statement`);
    return text;
  };
  let body: string | undefined;
  const bodyText = (): string => {
    body ??= bodyWith((position) => `$${position + 1}`);
    return body;
  };

  // `use_column`: the result columns are also PL/pgSQL variables; a name in the statement is the column's.
  const source = (): string =>
    `\n#variable_conflict use_column\nBEGIN\n${returns.length > 0 ? "  RETURN QUERY\n" : ""}${bodyText()};\nEND;\n`;

  const statement: KeptPlanStatement<Names> = {
    functionName,
    names,
    parameterTypes: names.map((name: Names[number]) => parameterTypes[name]),
    resultTypes: returns.map(([, type]) => type),
    resultColumns: returns,
    settings,
    call,
    callText: () => render(names, buildCall).text,
    body: bodyText,
    bodyWith,
    source,
    definition: () => functionDefinition(statement),
  };
  return statement;
}
