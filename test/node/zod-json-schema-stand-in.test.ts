import { describe, expect, it } from "vitest";
import { z } from "zod";
import * as standIn from "../../lib/validation/zod-without-json-schema.ts";
// zod's own module, by file (its package exports do not name it): the function the stand-in keeps.
import { aggregateChecks as zodAggregateChecks } from "../../node_modules/zod/v4/core/json-schema-processors.js";

/**
 * The stand-in for zod's JSON Schema output (the wrangler `alias`) keeps `aggregateChecks`, which the schema
 * classes' getters (`minLength`, `maxValue`, `format`, `isInt` ...) read at any time; it must agree with zod's
 * on every kind of check. Everything else throws: nothing in a worker may build a JSON Schema.
 */
const schemas: [string, z.ZodType][] = [
  ["plain string", z.string()],
  ["string min/max", z.string().min(2).max(40)],
  ["string length", z.string().length(8)],
  ["string tightened twice", z.string().min(2).min(5).max(9).max(7)],
  ["email", z.email()],
  ["url", z.string().url()],
  ["uuid", z.uuid()],
  ["iso datetime, local", z.iso.datetime({ local: true })],
  ["iso time", z.iso.time()],
  ["base64", z.base64()],
  ["regex", z.string().regex(/^[a-z]+$/)],
  ["number bounds", z.number().min(1).max(10)],
  ["number exclusive bounds", z.number().gt(0).lt(100)],
  ["int", z.int()],
  ["int32", z.int32()],
  ["positive int", z.number().int().positive()],
  ["multiple of", z.number().multipleOf(5).multipleOf(3)],
  ["float32", z.float32()],
  ["bigint", z.bigint().min(1n).max(9n)],
  ["int64", z.int64()],
  ["array size", z.array(z.string()).min(1).max(50)],
  ["set size", z.set(z.string()).size(3)],
  ["date bounds", z.date().min(new Date(0)).max(new Date(1e12))],
  ["file mime", z.file().mime(["image/png", "image/jpeg"]).mime(["image/png"])],
];

describe("zod's JSON Schema stand-in", () => {
  it.each(schemas)("aggregateChecks agrees with zod's: %s", (_name, schema) => {
    expect(standIn.aggregateChecks(schema)).toEqual(zodAggregateChecks(schema));
  });

  it("the bounds the getters report are the real ones", () => {
    expect(standIn.aggregateChecks(z.string().min(3).max(9))).toMatchObject({ minimum: 3, maximum: 9 });
    expect(standIn.aggregateChecks(z.int32())).toMatchObject({ minimum: -2147483648, isInt: true });
  });

  it.each([
    ["toJSONSchema", () => standIn.toJSONSchema()],
    ["a processor", () => standIn.stringProcessor()],
    ["a schema's toJSONSchema method", () => standIn.createToJSONSchemaMethod()()],
    ["a schema's ~standard jsonSchema", () => standIn.createStandardJSONSchemaMethod()()],
    ["the generator", () => new standIn.JSONSchemaGenerator()],
  ])("%s fails loudly", (_name, call) => {
    expect(call).toThrow("zod's JSON Schema output is not part of this build");
  });
});
