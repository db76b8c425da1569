import { sql } from "drizzle-orm";
import {
  checkedFunctionName,
  functionDefinition,
  GENERIC_PLANS,
  type KeptPlanFunction,
  type KeptPlanStatement,
  SOURCE_QUOTE,
} from "./kept-plan.ts";
import { type PreparedValue, preparedSql, render } from "./prepared-sql.ts";
import { wellFormedJson } from "./well-formed-json.ts";

/**
 * A PL/pgSQL function written as PL/pgSQL (branches, early exits), for what one statement or a sequence of
 * them cannot say: the sale decided and written in the database in one round trip (`sale-at-once.ts`). Its
 * values come as ONE `jsonb` array, in the order of `names`, each declared as a variable of its own name and
 * type; the call is `select * from name($1)`. One parameter, so a write batch (`kept-plan-write-batch.ts`)
 * runs it per item as it runs a sequence.
 *
 * The function must say exactly what this file says: `test/node/kept-plans.test.ts` compares it with the
 * migrations, as for every kept-plan statement.
 */
export interface KeptPlanProcedure<Names extends readonly string[]> extends KeptPlanFunction {
  readonly names: Names;
  call(values: ProcedureValues<Names>): ReturnType<ReturnType<typeof preparedSql>>;
  /** The call's one parameter, as a write batch's item holds it: the values in the order of `names`. */
  stepValues(values: ProcedureValues<Names>): PreparedValue[][];
  /**
   * The kept-plan statements a call surely runs, each with the parameters it got (as text), from the call's
   * own parameters: `npm run plans` explains them. Those a call runs only on some branches are not known from
   * its parameters.
   */
  stepsOfCall(params: readonly (string | null)[]): { statement: AnyKeptPlan; params: (string | null)[] }[];
}

/** A procedure's values by name (values only: JSON carries them). */
export type ProcedureValues<Names extends readonly string[]> = {
  [Name in Names[number]]: string | number | boolean | null;
};

const VALUES = ["values"] as const;
type AnyKeptPlan = KeptPlanStatement<readonly string[]>;

export function keptPlanProcedure<const Names extends readonly string[]>(spec: {
  functionName: string;
  /** The values' names (PL/pgSQL variables, so snake_case), in the order the call passes them. */
  names: Names;
  /** Each value's PostgreSQL type. */
  types: { [Name in Names[number]]: string };
  returns: readonly (readonly [column: string, type: string])[];
  /** Further variables: `name type;` lines of the `DECLARE` section. */
  declare: string;
  /** The statements between `BEGIN` and `END`. */
  body: string;
  /** The kept-plan statements every call runs first, each with the values it passes (`stepsOfCall`). */
  runsFirst?: readonly { statement: AnyKeptPlan; values: readonly Names[number][] }[];
}): KeptPlanProcedure<Names> {
  const { functionName, names, types } = spec;
  checkedFunctionName(functionName);
  for (const name of names) checkedFunctionName(name);
  const buildCall = (q: { values: ReturnType<typeof sql.placeholder> }) =>
    sql`select * from ${sql.raw(functionName)}(${q.values})`;
  const call = preparedSql(VALUES, buildCall);
  const valuesOf = (values: ProcedureValues<Names>): PreparedValue[] =>
    names.map((name: Names[number]) => {
      const value = values[name];
      if (value === undefined) throw new Error(`${functionName}: no value for ${name}`);
      if (typeof value === "number" && !Number.isFinite(value)) {
        throw new Error(`${functionName}: ${name} is not a finite number`);
      }
      return value;
    });
  const source = (): string => {
    const values = names
      .map((name: Names[number], k) => `  ${name} ${types[name]} := ($1->>${k})::${types[name]};\n`)
      .join("");
    const text = `\nDECLARE\n${values}${spec.declare}BEGIN\n${spec.body}END;\n`;
    if (text.includes(SOURCE_QUOTE)) throw new Error(`${SOURCE_QUOTE} in ${functionName}'s source`);
    return text;
  };
  const procedure: KeptPlanProcedure<Names> = {
    functionName,
    names,
    call: (values) => call({ values: wellFormedJson(valuesOf(values)) }),
    stepValues: (values) => [valuesOf(values)],
    stepsOfCall: (params) => {
      const values = JSON.parse(params[0] ?? "[]") as PreparedValue[];
      const text = (name: Names[number]) => {
        const value = values[names.indexOf(name)];
        return value === null || value === undefined ? null : String(value);
      };
      return (spec.runsFirst ?? []).map(({ statement, values: passed }) => ({
        statement,
        params: passed.map(text),
      }));
    },
    callText: () => render(VALUES, buildCall).text,
    parameterTypes: ["jsonb"],
    resultTypes: spec.returns.map(([, type]) => type),
    resultColumns: spec.returns,
    settings: [GENERIC_PLANS],
    source,
    definition: () => functionDefinition(procedure),
  };
  return procedure;
}
