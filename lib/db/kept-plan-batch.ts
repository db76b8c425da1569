import { sql } from "drizzle-orm";
import {
  checkedFunctionName,
  functionDefinition,
  GENERIC_PLANS,
  type KeptPlanFunction,
  type KeptPlanStatement,
  valueFromJsonArray,
} from "./kept-plan.ts";
import { statementValues } from "./kept-plan-sequence.ts";
import { type PreparedValue, preparedSql, render } from "./prepared-sql.ts";
import { wellFormedJson } from "./well-formed-json.ts";

/** The values of one item: those its statement's `call` takes (values only: a placeholder is refused). */
export type ItemValues<Names extends readonly string[]> = { [Name in Names[number]]: PreparedValue };

const ITEMS = ["items"] as const;

/** The column a batch adds before its statement's own: which item (from 0, in the call's order) a row is of. */
export const ITEM_COLUMN = "batch_item";

/**
 * One kept-plan statement (`lib/db/kept-plan.ts`) run once per item of a JSON array, in order, by ONE
 * PL/pgSQL function: several requests' writes of the same shape sent as one statement and committed as one
 * transaction (the click's group commit, `lib/db/group-commit.ts`).
 *
 * Why: a statement costs the worker, the SQL endpoint and PostgreSQL a round of handling whatever it does
 * (its text and values written and read, its parse, its result), and a committed transaction a WAL flush;
 * ten clicks sent as one pay those once.
 *
 * How: the one `jsonb` parameter is the array of the items, each the JSON array of its values in its
 * statement's order (as a sequence's step, `kept-plan-sequence.ts`); the function casts each element to
 * the statement's parameter type and calls the statement's own function, and returns its rows with the
 * item's index first (`batch_item`). The items run in one transaction, each seeing the writes of those
 * before it; one that fails aborts the whole call.
 *
 * A read (`inlined`: a SELECT of one row per item, such as the reads of a lead, a sale or a refund) is run
 * instead as ONE statement: its body joined laterally to the items, each parameter written as the item's
 * value, the rows in the items' order. Why: calling the statement's function once per item starts its
 * statement once per item (PostgreSQL opens every scalar subquery's index scan anew, the largest part of a
 * small read), where one statement starts once and only rescans them per item. A batch of three sale reads,
 * 3,000 times in a PL/pgSQL loop on the bench database: 415 ms called per item, 231 ms inlined, the same rows.
 * The function then runs the statement's plan itself, with the statement's settings. Its items read one
 * snapshot, where each call per item took its own: either is a moment the request's read could have run at
 * alone, and the writes that follow check with their guards what changed since.
 *
 * The function must say exactly what this file says: `test/node/kept-plans.test.ts` compares it with the
 * migrations, as for every kept-plan statement.
 */
export interface KeptPlanBatch<Names extends readonly string[]> extends KeptPlanFunction {
  readonly statement: KeptPlanStatement<Names>;
  /** The call: one item per run of the statement. */
  call(items: readonly ItemValues<Names>[]): ReturnType<KeptPlanStatement<Names>["call"]>;
  /** Each item a call ran, with the parameters its statement got (as text, as the driver sends them). */
  itemsOfCall(params: readonly (string | null)[]): (string | null)[][];
  /** The one statement an inlined batch runs (`$1` the items' array), or undefined: one call per item. */
  inlinedStatement(): string | undefined;
}

/** The names the inlined form's statement gives the items and the statement's rows. */
const INLINED_NAMES = ["batch_items", "item_values", "item_number", "statement_rows"];

export function keptPlanBatch<const Names extends readonly string[]>(spec: {
  functionName: string;
  statement: KeptPlanStatement<Names>;
  /** A read of one row per item, run as one statement over the items (above); otherwise one call per item. */
  inlined?: boolean;
}): KeptPlanBatch<Names> {
  const { functionName, statement } = spec;
  const inlined = spec.inlined === true;
  checkedFunctionName(functionName);
  if (statement.resultColumns.length === 0) {
    throw new Error(`${functionName}: ${statement.functionName} returns nothing to tell its items apart`);
  }
  const reserved = [ITEM_COLUMN, "item", ...(inlined ? INLINED_NAMES : [])];
  for (const [name] of statement.resultColumns) {
    if (reserved.includes(name)) {
      throw new Error(`${functionName}: ${statement.functionName} has a column named ${name}`);
    }
  }

  const buildCall = (q: { items: ReturnType<typeof sql.placeholder> }) =>
    sql`select * from ${sql.raw(functionName)}(${q.items})`;
  const call = preparedSql(ITEMS, buildCall);
  const resultColumns = [[ITEM_COLUMN, "integer"] as const, ...statement.resultColumns];
  const settings = inlined ? statement.settings : [GENERIC_PLANS];

  /** The inlined form's statement: the items, each joined to the statement's row of its values. */
  const inlinedStatement = (): string => {
    const value = (k: number) => valueFromJsonArray(statement, "batch_items.item_values", k);
    return (
      "SELECT (batch_items.item_number - 1)::integer, statement_rows.*\n" +
      "  FROM jsonb_array_elements($1) WITH ORDINALITY AS batch_items (item_values, item_number)\n" +
      `  CROSS JOIN LATERAL (\n${statement.bodyWith(value)}\n  ) AS statement_rows\n` +
      "  ORDER BY batch_items.item_number"
    );
  };

  // The result columns are PL/pgSQL variables too: the body names none of the statement's own (the array's
  // elements and the statement's rows are reached through `*`), and neither `item` nor `batch_item` is one.
  // Inlined, the statement is the body's own (a result column it names is the column, as in its function).
  const source = (): string => {
    if (inlined)
      return `\n#variable_conflict use_column\nBEGIN\n  RETURN QUERY\n${inlinedStatement()};\nEND;\n`;
    const args = statement.parameterTypes.map((_, k) => valueFromJsonArray(statement, "item", k)).join(", ");
    return (
      "\nDECLARE\n  item jsonb;\nBEGIN\n" +
      `  ${ITEM_COLUMN} := 0;\n` +
      "  FOR item IN SELECT * FROM jsonb_array_elements($1) LOOP\n" +
      `    RETURN QUERY SELECT ${ITEM_COLUMN}, * FROM ${statement.functionName}(${args});\n` +
      `    ${ITEM_COLUMN} := ${ITEM_COLUMN} + 1;\n` +
      "  END LOOP;\nEND;\n"
    );
  };

  const created: KeptPlanBatch<Names> = {
    functionName,
    statement,
    call: (items) => {
      if (items.length === 0) throw new Error(`${functionName}: a batch of no items`);
      return call({ items: wellFormedJson(items.map((values) => statementValues(statement, values))) });
    },
    callText: () => render(ITEMS, buildCall).text,
    itemsOfCall: (params) => {
      const items = JSON.parse(params[0] ?? "[]") as unknown[][];
      return items.map((values) => values.map((v) => (v === null ? null : String(v))));
    },
    inlinedStatement: () => (inlined ? inlinedStatement() : undefined),
    parameterTypes: ["jsonb"],
    resultTypes: resultColumns.map(([, type]) => type),
    resultColumns,
    settings,
    source,
    definition: () => functionDefinition(created),
  };
  return created;
}
