import { sql } from "drizzle-orm";
import {
  checkedFunctionName,
  functionDefinition,
  GENERIC_PLANS,
  type KeptPlanFunction,
  type KeptPlanStatement,
} from "./kept-plan.ts";
import type { KeptPlanSequence } from "./kept-plan-sequence.ts";
import { type PreparedValue, preparedSql, render } from "./prepared-sql.ts";
import { wellFormedJson } from "./well-formed-json.ts";

type AnyKeptPlan = KeptPlanStatement<readonly string[]>;

/**
 * What a write batch runs once per item: a write sequence (`kept-plan-sequence.ts`), or a kept-plan procedure
 * (`kept-plan-procedure.ts`, a PL/pgSQL function written as such): a function of `jsonb` parameters whose call
 * passes one JSON array of values per parameter (`stepValues`), returning one row.
 */
export type BatchableWrite<Values = never> = Pick<
  KeptPlanSequence<Record<string, AnyKeptPlan>>,
  "functionName" | "parameterTypes" | "resultColumns" | "stepsOfCall" | keyof KeptPlanFunction
> & {
  call(values: Values): ReturnType<AnyKeptPlan["call"]>;
  stepValues(values: Values): (PreparedValue[] | null)[];
};
type AnySequence = BatchableWrite<never>;

const ITEMS = ["items"] as const;

/** The columns a write batch adds before its sequence's own: the item, and the error it failed with, if any. */
export const WRITE_BATCH_COLUMNS = [
  ["batch_item", "integer"],
  ["failed_code", "text"],
  ["failed_message", "text"],
  ["failed_constraint", "text"],
] as const;

/**
 * A write sequence (`kept-plan-sequence.ts`, a sale's or a refund's whole write) run once per item of a JSON
 * array by ONE PL/pgSQL function, each item in a subtransaction of its own: several requests' writes sent as
 * one statement and committed as one transaction (`group-committed-write.ts`), each with its own outcome.
 *
 * Why: a write's round trip costs the worker, the SQL endpoint and PostgreSQL a round of handling whatever it
 * writes (its text and values written and read, its result, its transaction's commit and WAL flush), and each
 * commit holds its rows' locks (a partner's balance) until the flush is done; ten writes sent as one pay
 * those once.
 *
 * Why a subtransaction per item (`BEGIN ... EXCEPTION`): an item that fails (a guard that found the state
 * changed, a unique key a concurrent request took, a value the database refuses) is rolled back alone, as if
 * it had been sent alone, and its row says why (`failed_code`, `failed_message`, `failed_constraint`: the
 * error's SQLSTATE, message and constraint); the others go on and commit. So a request's write succeeds or
 * fails in a batch exactly as it would alone, and its error keeps what the conflict retries read.
 *
 * Each item must return exactly one row (the sequence's); one that returns none or several fails
 * (`P0002`, `P0003`). An item's skipped steps are JSON nulls (SQL NULL for the sequence).
 *
 * The function must say exactly what this file says: `test/node/kept-plans.test.ts` compares it with the
 * migrations, as for every kept-plan statement.
 */
export interface KeptPlanWriteBatch<Sequence extends AnySequence> extends KeptPlanFunction {
  readonly sequence: Sequence;
  /** The call: one item per run of the sequence. */
  call(items: readonly SequenceValuesOf<Sequence>[]): ReturnType<AnyKeptPlan["call"]>;
  /** Each item a call ran, as the parameters its sequence's call would get (as text, as the driver sends them). */
  itemsOfCall(params: readonly (string | null)[]): (string | null)[][];
}

export type SequenceValuesOf<Sequence> = Sequence extends BatchableWrite<infer Values> ? Values : never;

export function keptPlanWriteBatch<const Sequence extends AnySequence>(spec: {
  functionName: string;
  sequence: Sequence;
  /**
   * The order the function runs the items in, as an SQL expression of `item` (the item's JSON), for a write
   * whose worker cannot tell it (the partner whose balance a sale decided at once locks is read in the
   * database): batches lock shared rows in one order, so two of them do not deadlock. Unset: the order sent.
   */
  lockOrder?: (item: string) => string;
}): KeptPlanWriteBatch<Sequence> {
  const { functionName, sequence } = spec;
  checkedFunctionName(functionName);
  if (sequence.resultColumns.length === 0) {
    throw new Error(`${functionName}: ${sequence.functionName} returns no row to answer its items with`);
  }
  const own = new Set<string>(WRITE_BATCH_COLUMNS.map(([name]) => name));
  for (const [name] of sequence.resultColumns) {
    if (own.has(name) || name === "item" || name === "written") {
      throw new Error(`${functionName}: ${sequence.functionName} has a column named ${name}`);
    }
  }

  const buildCall = (q: { items: ReturnType<typeof sql.placeholder> }) =>
    sql`select * from ${sql.raw(functionName)}(${q.items})`;
  const call = preparedSql(ITEMS, buildCall);
  const resultColumns = [...WRITE_BATCH_COLUMNS, ...sequence.resultColumns];
  const settings = [GENERIC_PLANS];

  // The result columns are PL/pgSQL variables too: the body reads the sequence's row as `written.<column>`
  // and names no result column in a query, so neither can be taken for the other.
  const source = (): string => {
    const args = sequence.parameterTypes.map((_, k) => `nullif(item->${k}, 'null')`).join(", ");
    const columns = sequence.resultColumns.map(([name]) => `written.${name}`).join(", ");
    const nulls = sequence.resultColumns.map(([, type]) => `NULL::${type}`).join(", ");
    return (
      "\nDECLARE\n  item jsonb;\n  written record;\n" +
      "BEGIN\n" +
      (spec.lockOrder
        ? "  FOR item, batch_item IN SELECT e.value, (e.n - 1)::integer\n" +
          "    FROM jsonb_array_elements($1) WITH ORDINALITY AS e(value, n)\n" +
          `    ORDER BY ${spec.lockOrder("e.value")}, e.n LOOP\n`
        : "  batch_item := 0;\n  FOR item IN SELECT * FROM jsonb_array_elements($1) LOOP\n") +
      "    BEGIN\n" +
      `      SELECT * INTO STRICT written FROM ${sequence.functionName}(${args});\n` +
      `      RETURN QUERY SELECT batch_item, NULL::text, NULL::text, NULL::text, ${columns};\n` +
      "    EXCEPTION WHEN OTHERS THEN\n" +
      "      GET STACKED DIAGNOSTICS failed_code = RETURNED_SQLSTATE, failed_message = MESSAGE_TEXT,\n" +
      "                              failed_constraint = CONSTRAINT_NAME;\n" +
      `      RETURN QUERY SELECT batch_item, failed_code, failed_message, nullif(failed_constraint, ''), ${nulls};\n` +
      "    END;\n" +
      (spec.lockOrder ? "" : "    batch_item := batch_item + 1;\n") +
      "  END LOOP;\n" +
      "END;\n"
    );
  };

  const created: KeptPlanWriteBatch<Sequence> = {
    functionName,
    sequence,
    call: (items) => {
      if (items.length === 0) throw new Error(`${functionName}: a batch of no items`);
      return call({
        items: wellFormedJson(items.map((values) => sequence.stepValues(values as never))),
      });
    },
    callText: () => render(ITEMS, buildCall).text,
    itemsOfCall: (params) => {
      const items = JSON.parse(params[0] ?? "[]") as (PreparedValue[] | null)[][];
      return items.map((steps) => steps.map((values) => (values === null ? null : JSON.stringify(values))));
    },
    parameterTypes: ["jsonb"],
    resultTypes: resultColumns.map(([, type]) => type),
    resultColumns,
    settings,
    source,
    definition: () => functionDefinition(created),
  };
  return created;
}
