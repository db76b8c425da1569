/**
 * Stands in for zod's JSON Schema output (`zod/v4/core/json-schema-processors.js`, `to-json-schema.js` and
 * `json-schema-generator.js`) in the deployed workers (the `alias` of every wrangler config). Every zod
 * schema class references them (its `toJSONSchema()` method and one processor per type), so zod's namespace
 * keeps all three (about 23 KB minified) in every bundle, but the service never turns a schema into a JSON
 * Schema at request time: the OpenAPI document is written at build time, in Node, with the real modules
 * (`npm run build:openapi`). Should anything call them in a worker, they fail loudly instead of answering an
 * empty schema.
 *
 * One piece runs outside JSON Schema: the getters `minLength`, `maxLength`, `minValue`, `maxValue`, `format`,
 * `isInt` and `isFinite` of the schema classes read `aggregateChecks`, so it is kept, as zod 4.6.7 writes it
 * (`test/node/zod-json-schema-stand-in.test.ts` compares the two on every kind of check).
 */
import { util } from "zod/v4/core";

type Aggregate = {
  minimum?: number | bigint;
  maximum?: number | bigint;
  exclusiveMinimum?: number | bigint;
  exclusiveMaximum?: number | bigint;
  multipleOf?: (number | bigint)[];
  format?: string;
  isInt?: boolean;
  patterns?: Set<RegExp>;
  contentEncoding?: string;
  laxFormat?: boolean;
  mime?: string[];
};
type Bound = "minimum" | "maximum" | "exclusiveMinimum" | "exclusiveMaximum";
// biome-ignore lint/suspicious/noExplicitAny: zod's internal check definitions are untyped here
type CheckDef = any;

const narrowMin = (agg: Aggregate, key: Bound, value: number | bigint) => {
  const current = agg[key];
  if (current === undefined || value > current) agg[key] = value;
};
const narrowMax = (agg: Aggregate, key: Bound, value: number | bigint) => {
  const current = agg[key];
  if (current === undefined || value < current) agg[key] = value;
};
const narrowBoth = (agg: Aggregate, value: number) => {
  narrowMin(agg, "minimum", value);
  narrowMax(agg, "maximum", value);
};
const addDivisor = (agg: Aggregate, value: number | bigint) => {
  agg.multipleOf ??= [];
  if (!agg.multipleOf.includes(value)) agg.multipleOf.push(value);
};
const addPattern = (agg: Aggregate, pattern: RegExp) => {
  agg.patterns ??= new Set();
  agg.patterns.add(pattern);
};
const intersectMime = (agg: Aggregate, mime: string[]) => {
  agg.mime = agg.mime ? agg.mime.filter((m) => mime.includes(m)) : [...mime];
};
const setFormat = (agg: Aggregate, format: string) => {
  agg.format = format;
  if (format.includes("int")) agg.isInt = true;
};
const minContributor = (agg: Aggregate, def: CheckDef) => narrowMin(agg, "minimum", def.minimum);
const maxContributor = (agg: Aggregate, def: CheckDef) => narrowMax(agg, "maximum", def.maximum);
/** A number or bigint format narrows to its type's range (zod's own tables, read when a getter runs). */
const formatContributor = (agg: Aggregate, def: CheckDef) => {
  setFormat(agg, def.format);
  const ranges: Record<string, [number | bigint, number | bigint]> = {
    ...util.NUMBER_FORMAT_RANGES,
    ...util.BIGINT_FORMAT_RANGES,
  };
  const [minimum, maximum] = ranges[def.format] ?? [];
  if (minimum !== undefined) narrowMin(agg, "minimum", minimum);
  if (maximum !== undefined) narrowMax(agg, "maximum", maximum);
};
const contributors: Record<string, (agg: Aggregate, def: CheckDef) => void> = {
  greater_than: (agg, def) => narrowMin(agg, def.inclusive ? "minimum" : "exclusiveMinimum", def.value),
  less_than: (agg, def) => narrowMax(agg, def.inclusive ? "maximum" : "exclusiveMaximum", def.value),
  multiple_of: (agg, def) => addDivisor(agg, def.value),
  number_format: formatContributor,
  bigint_format: formatContributor,
  min_length: minContributor,
  max_length: maxContributor,
  length_equals: (agg, def) => narrowBoth(agg, def.length),
  min_size: minContributor,
  max_size: maxContributor,
  size_equals: (agg, def) => narrowBoth(agg, def.size),
  string_format: (agg, def) => {
    setFormat(agg, def.format);
    if (def.pattern) addPattern(agg, def.pattern);
    if (def.format === "base64" || def.format === "base64url") agg.contentEncoding = def.format;
    if (def.local || def.precision === -1) agg.laxFormat = true;
  },
  mime_type: (agg, def) => intersectMime(agg, def.mime),
};

// biome-ignore lint/suspicious/noExplicitAny: a zod schema's internals
export function aggregateChecks(schema: any): Aggregate {
  const agg: Aggregate = {};
  const def = schema._zod.def;
  // a format schema is its own first check, same rule as zod's $ZodType init
  const list = schema._zod.traits.has("$ZodCheck") ? [schema, ...(def.checks ?? [])] : (def.checks ?? []);
  for (const check of list) contributors[check._zod.def.check]?.(agg, check._zod.def);
  const bag = schema._zod.bag;
  if (bag.minimum !== undefined) narrowMin(agg, "minimum", bag.minimum);
  if (bag.exclusiveMinimum !== undefined) narrowMin(agg, "exclusiveMinimum", bag.exclusiveMinimum);
  if (bag.maximum !== undefined) narrowMax(agg, "maximum", bag.maximum);
  if (bag.exclusiveMaximum !== undefined) narrowMax(agg, "exclusiveMaximum", bag.exclusiveMaximum);
  if (bag.multipleOf !== undefined) addDivisor(agg, bag.multipleOf);
  if (bag.format !== undefined) {
    agg.format ??= bag.format;
    if (bag.format.includes("int")) agg.isInt = true;
  }
  if (bag.mime) intersectMime(agg, bag.mime);
  for (const pattern of bag.patterns ?? []) addPattern(agg, pattern);
  return agg;
}

function notInThisBuild(): never {
  throw new Error(
    "zod's JSON Schema output is not part of this build (lib/validation/zod-without-json-schema.ts): " +
      "the OpenAPI document is written by `npm run build:openapi`",
  );
}

// json-schema-processors.js: one processor per schema type, the table of them, and z.toJSONSchema.
export const stringProcessor = notInThisBuild;
export const numberProcessor = notInThisBuild;
export const booleanProcessor = notInThisBuild;
export const bigintProcessor = notInThisBuild;
export const symbolProcessor = notInThisBuild;
export const nullProcessor = notInThisBuild;
export const undefinedProcessor = notInThisBuild;
export const voidProcessor = notInThisBuild;
export const neverProcessor = notInThisBuild;
export const anyProcessor = notInThisBuild;
export const unknownProcessor = notInThisBuild;
export const dateProcessor = notInThisBuild;
export const enumProcessor = notInThisBuild;
export const literalProcessor = notInThisBuild;
export const nanProcessor = notInThisBuild;
export const templateLiteralProcessor = notInThisBuild;
export const fileProcessor = notInThisBuild;
export const successProcessor = notInThisBuild;
export const customProcessor = notInThisBuild;
export const functionProcessor = notInThisBuild;
export const transformProcessor = notInThisBuild;
export const mapProcessor = notInThisBuild;
export const setProcessor = notInThisBuild;
export const arrayProcessor = notInThisBuild;
export const objectProcessor = notInThisBuild;
export const unionProcessor = notInThisBuild;
export const intersectionProcessor = notInThisBuild;
export const tupleProcessor = notInThisBuild;
export const recordProcessor = notInThisBuild;
export const nullableProcessor = notInThisBuild;
export const nonoptionalProcessor = notInThisBuild;
export const defaultProcessor = notInThisBuild;
export const prefaultProcessor = notInThisBuild;
export const catchProcessor = notInThisBuild;
export const pipeProcessor = notInThisBuild;
export const readonlyProcessor = notInThisBuild;
export const promiseProcessor = notInThisBuild;
export const optionalProcessor = notInThisBuild;
export const lazyProcessor = notInThisBuild;
export const allProcessors = {};
export const toJSONSchema = notInThisBuild;

// to-json-schema.js: the conversion itself and the schema methods that start it (made eagerly by each
// schema's `~standard` getter, so they must return a function; it throws only when called).
export const initializeContext = notInThisBuild;
export const handleUnrepresentable = notInThisBuild;
export const processSchema = notInThisBuild;
export { processSchema as process };
export const extractDefs = notInThisBuild;
export const finalize = notInThisBuild;
export const createToJSONSchemaMethod = () => notInThisBuild;
export const createStandardJSONSchemaMethod = () => notInThisBuild;

// json-schema-generator.js
export class JSONSchemaGenerator {
  constructor() {
    notInThisBuild();
  }
}
