import { sql } from "drizzle-orm";
import {
  checkedFunctionName,
  functionDefinition,
  GENERIC_PLANS,
  type KeptPlanFunction,
  type KeptPlanStatement,
  valueFromJsonArray,
} from "./kept-plan.ts";
import { type PreparedValue, preparedSql, render } from "./prepared-sql.ts";
import { wellFormedJson } from "./well-formed-json.ts";

type AnyKeptPlan = KeptPlanStatement<readonly string[]>;

/** The values of one step: those its statement's `call` takes (values only: a placeholder is refused). */
export type StepValues<Step> =
  Step extends KeptPlanStatement<infer Names> ? { [Name in Names[number]]: PreparedValue } : never;

/**
 * Several kept-plan statements (`lib/db/kept-plan.ts`) run in order by ONE PL/pgSQL function, so that a write
 * of several statements is sent as one. Each step is optional: the call passes the values of the steps
 * that run, and the function skips the others. The function returns the rows of the steps named in
 * `returnsFrom` that ran (alternatives of one result, such as one insert per way of naming a customer), or
 * nothing.
 *
 * Why: every statement of a batch is a query of its own for the SQL endpoint and for PostgreSQL (its
 * parse, bind and execute, its result sent back and read), and for the worker a part of the request's body
 * to write and of the answer to read. A sale's write was up to six such statements, a refund's four
 * (`npm run bench` prints statements per request and the CPU each process spent).
 *
 * How: one `jsonb` parameter per step, the JSON array of the step's values in its statement's order, or
 * null for a step that does not run; the function casts each element to the statement's parameter type
 * (`($1->>0)::bigint`) and calls the statement's own function. A step's statements run as they ran in the
 * batch: in the same transaction, each seeing the writes of those before it; a guard or a constraint that
 * fails aborts the whole call with the same error as before.
 *
 * The function must say exactly what this file says: `test/node/kept-plans.test.ts` compares it with the
 * migrations, as for every kept-plan statement.
 */
export interface KeptPlanSequence<Steps extends Record<string, AnyKeptPlan>> extends KeptPlanFunction {
  /** The steps, in the order they run. */
  readonly steps: readonly (readonly [key: keyof Steps & string, statement: AnyKeptPlan])[];
  /** The call: a step given no values (omitted or null) is skipped. */
  call(values: SequenceValues<Steps>): ReturnType<AnyKeptPlan["call"]>;
  /**
   * The values of each step in its statement's order, or null for a step skipped: what the call passes, one
   * JSON array per step (a write batch's item, `kept-plan-write-batch.ts`).
   */
  stepValues(values: SequenceValues<Steps>): (PreparedValue[] | null)[];
  /**
   * The steps a call ran, each with the parameters its statement got (as text, as the driver sends them),
   * from the call's own parameters: `npm run plans` explains each step's statement with them.
   */
  stepsOfCall(params: readonly (string | null)[]): { statement: AnyKeptPlan; params: (string | null)[] }[];
}

/** A sequence call's values: a step given no values (omitted or null) is skipped. */
export type SequenceValues<Steps extends Record<string, AnyKeptPlan>> = {
  [Key in keyof Steps]?: StepValues<Steps[Key]> | null;
};

export interface KeptPlanSequenceSpec<Steps extends Record<string, AnyKeptPlan>> {
  functionName: string;
  /** The steps, in the order they run (the object's key order). */
  steps: Steps;
  /**
   * The step, or the steps, whose rows the function returns (they must have the same result columns); none:
   * it returns nothing (`RETURNS void`).
   */
  returnsFrom?: (keyof Steps & string) | readonly (keyof Steps & string)[];
}

export function keptPlanSequence<const Steps extends Record<string, AnyKeptPlan>>(
  spec: KeptPlanSequenceSpec<Steps>,
): KeptPlanSequence<Steps> {
  const { functionName } = spec;
  checkedFunctionName(functionName);
  const steps = Object.entries(spec.steps) as [keyof Steps & string, AnyKeptPlan][];
  const keys = steps.map(([key]) => key);
  const returnsFrom: readonly string[] =
    spec.returnsFrom === undefined
      ? []
      : typeof spec.returnsFrom === "string"
        ? [spec.returnsFrom]
        : spec.returnsFrom;
  const returningSteps = returnsFrom.map((key) => {
    const step = spec.steps[key];
    if (!step) throw new Error(`${functionName}: no step ${key}`);
    return step;
  });
  const returning = returningSteps[0];
  for (const step of returningSteps) {
    if (JSON.stringify(step.resultColumns) !== JSON.stringify(returning?.resultColumns)) {
      throw new Error(
        `${functionName}: ${step.functionName} returns other columns than ${returning?.functionName}`,
      );
    }
  }

  const buildCall = (q: Record<string, ReturnType<typeof sql.placeholder>>) =>
    sql`select * from ${sql.raw(functionName)}(${sql.join(
      keys.map((key) => q[key]),
      sql`, `,
    )})`;
  const call = preparedSql(keys, buildCall);

  const source = (): string => {
    const lines = steps.map(([key, statement], index) => {
      const parameter = `$${index + 1}`;
      const args = statement.parameterTypes
        .map((_, k) => valueFromJsonArray(statement, parameter, k))
        .join(", ");
      const run = returnsFrom.includes(key)
        ? `RETURN QUERY SELECT * FROM ${statement.functionName}(${args});`
        : `PERFORM ${statement.functionName}(${args});`;
      return `  IF ${parameter} IS NOT NULL THEN\n    ${run}\n  END IF;\n`;
    });
    return `\nBEGIN\n${lines.join("")}END;\n`;
  };
  const resultTypes = returning?.resultTypes ?? [];
  const settings = [GENERIC_PLANS];
  const stepValues = (values: SequenceValues<Steps>) =>
    steps.map(([key, statement]) => {
      const given = values[key] ?? null;
      return given === null ? null : statementValues(statement, given);
    });

  const sequence: KeptPlanSequence<Steps> = {
    functionName,
    steps,
    call: (values) => {
      const parameters = stepValues(values).map((given) => (given === null ? null : wellFormedJson(given)));
      return call(
        Object.fromEntries(keys.map((key, index) => [key, parameters[index]])) as Record<
          keyof Steps & string,
          PreparedValue
        >,
      );
    },
    stepValues,
    callText: () => render(keys, buildCall).text,
    stepsOfCall: (params) =>
      steps.flatMap(([, statement], index) => {
        const given = params[index];
        if (given === null || given === undefined) return [];
        const values = JSON.parse(given) as unknown[];
        return [{ statement, params: values.map((v) => (v === null ? null : String(v))) }];
      }),
    parameterTypes: steps.map(() => "jsonb"),
    resultTypes,
    resultColumns: returning?.resultColumns ?? [],
    settings,
    source,
    definition: () => functionDefinition(sequence),
  };
  return sequence;
}

/**
 * A statement's values in its parameters' order, for a JSON array the function casts element by element
 * (a sequence's step, a batch's item): values only, and numbers JSON can hold.
 */
export function statementValues(
  statement: AnyKeptPlan,
  values: Record<string, PreparedValue>,
): PreparedValue[] {
  return statement.names.map((name) => {
    const value = values[name];
    if (value === undefined) throw new Error(`${statement.functionName}: no value for ${name}`);
    if (typeof value === "object" && value !== null) {
      throw new Error(`${statement.functionName}: ${name} is not a value`);
    }
    // JSON has no NaN or infinity: written as null, the value would be stored as SQL NULL, not refused.
    if (typeof value === "number" && !Number.isFinite(value)) {
      throw new Error(`${statement.functionName}: ${name} is not a finite number`);
    }
    return value;
  });
}
