import fc from "fast-check";
import { dereference, type JsonSchema, type OpenApiDocument, type Operation } from "./openapi-schemas.ts";

/**
 * Requests generated from an operation's schemas, and from outside them: values of the wrong type, missing
 * required and unknown fields, NUL and other control characters, huge numbers, long strings, deep nesting,
 * bodies that are not JSON, wrong content types, wrong methods and bad headers.
 */

/** Values a request may name that exist (the fuzzed program's id, a recorded click...), by field name. */
export type KnownValues = Record<string, unknown[]>;

export interface Credentials {
  apiKey: string;
  testApiKey: string;
  /** A dashboard sign-in token of a member of the fuzzed program. */
  sessionToken: string;
}

export interface FuzzRequest {
  operation: Operation;
  method: string;
  url: string;
  headers: Record<string, string>;
  body?: string;
  /** What was done to the request, for the failure report. */
  shape: string;
}

const controlCharacters = fc.constantFrom("\u0000", "\u0001", "\u0007", "\u001b", "\u007f", "\t", "\n", "\r");

/** Strings that hurt: NUL and control characters, lone surrogates, long runs, SQL and path syntax. */
export const hostileString: fc.Arbitrary<string> = fc.oneof(
  fc.string({ unit: "binary", maxLength: 40 }),
  fc
    .tuple(fc.string({ maxLength: 8 }), controlCharacters, fc.string({ maxLength: 8 }))
    .map((p) => p.join("")),
  fc.constantFrom(
    "",
    " ",
    "\ud800",
    "'; drop table programs; --",
    "../../etc/passwd",
    "%00",
    "null",
    "0",
    "-1",
  ),
  fc.integer({ min: 256, max: 70_000 }).map((n) => "x".repeat(n)),
);

export const hostileNumber: fc.Arbitrary<number> = fc.oneof(
  fc.constantFrom(0, -1, -0, 2 ** 31, 2 ** 31 - 1, -(2 ** 31) - 1, 2 ** 53 + 2, 1e308, -1e308, 0.5, 1e-300),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
);

/** Any JSON value, nested a little. */
export const anyJson: fc.Arbitrary<unknown> = fc.jsonValue({ maxDepth: 3 }).map((v) => v as unknown);

function typesOf(schema: JsonSchema): string[] {
  if (Array.isArray(schema.type)) return schema.type;
  if (typeof schema.type === "string") return [schema.type];
  if (schema.enum) return [];
  if (schema.properties) return ["object"];
  return [];
}

/** A value the schema accepts (best effort: `pattern` and `format` are not honoured, which is fuzz too). */
export function schemaArbitrary(
  schema: JsonSchema,
  known: KnownValues,
  name = "",
  depth = 0,
): fc.Arbitrary<unknown> {
  const fromKnown = known[name];
  const own = schemaValue(schema, known, depth);
  return fromKnown?.length ? fc.oneof({ arbitrary: fc.constantFrom(...fromKnown), weight: 3 }, own) : own;
}

function schemaValue(schema: JsonSchema, known: KnownValues, depth: number): fc.Arbitrary<unknown> {
  if (!schema || typeof schema !== "object" || depth > 4) return anyJson;
  if (schema.const !== undefined) return fc.constant(schema.const);
  if (Array.isArray(schema.enum)) return fc.constantFrom(...schema.enum);
  const alternatives = schema.anyOf ?? schema.oneOf;
  if (Array.isArray(alternatives)) {
    return fc.oneof(...alternatives.map((s: JsonSchema) => schemaValue(s, known, depth + 1)));
  }
  const types = typesOf(schema);
  if (types.length === 0) return anyJson;
  return fc.oneof(
    ...types.map((type): fc.Arbitrary<unknown> => {
      switch (type) {
        case "null":
          return fc.constant(null);
        case "boolean":
          return fc.boolean();
        case "integer": {
          const min =
            schema.minimum ?? (schema.exclusiveMinimum !== undefined ? schema.exclusiveMinimum + 1 : 0);
          const max = Math.min(schema.maximum ?? 1_000_000, Number.MAX_SAFE_INTEGER);
          return fc.integer({
            min: Math.max(min, -(2 ** 31)),
            max: Math.max(min, Math.min(max, 2 ** 31 - 1)),
          });
        }
        case "number":
          return fc.double({
            min: schema.minimum ?? schema.exclusiveMinimum ?? 0,
            max: schema.maximum ?? 1e6,
            noNaN: true,
          });
        case "string":
          return fc.string({
            minLength: schema.minLength ?? 0,
            maxLength: Math.min(schema.maxLength ?? 40, 40),
          });
        case "array":
          return fc.array(schemaValue(schema.items ?? {}, known, depth + 1), { maxLength: 3 });
        case "object":
          return objectOf(schema, known, depth);
        default:
          return anyJson;
      }
    }),
  );
}

function objectOf(
  schema: JsonSchema,
  known: KnownValues,
  depth: number,
): fc.Arbitrary<Record<string, unknown>> {
  const properties: Record<string, JsonSchema> = schema.properties ?? {};
  const required: string[] = schema.required ?? [];
  const record: Record<string, fc.Arbitrary<unknown>> = {};
  for (const [key, property] of Object.entries(properties))
    record[key] = schemaArbitrary(property, known, key, depth + 1);
  return fc.record(record, { requiredKeys: required.filter((k) => k in record) });
}

/** Deep nesting as raw JSON text: `[[[...]]]` or `{"a":{"a":...}}`. */
const deepJson = fc
  .tuple(fc.constantFrom(64, 1_000, 5_000, 20_000), fc.boolean())
  .map(([depth, arrays]) =>
    arrays ? `${"[".repeat(depth)}${"]".repeat(depth)}` : `${'{"a":'.repeat(depth)}1${"}".repeat(depth)}`,
  );

/** Bodies that are not a JSON object: broken JSON, other types, huge literals, deep nesting. */
const notAnObject: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom(
    "",
    "{",
    "{}}",
    "nul",
    "[]",
    "null",
    "true",
    '"x"',
    "1e999",
    "-1e999",
    '{"a":1,"a":2}',
    "\u0000",
  ),
  fc.string({ unit: "binary", maxLength: 60 }),
  deepJson,
  anyJson.map((v) => JSON.stringify(v)),
);

/** A valid object broken in one way: a field dropped, retyped, made hostile, or one added. */
function mutated(
  base: Record<string, unknown>,
  schema: JsonSchema,
): fc.Arbitrary<{ value: unknown; shape: string }> {
  const keys = Object.keys(schema.properties ?? {});
  const required: string[] = schema.required ?? [];
  const field = keys.length ? fc.constantFrom(...keys) : fc.constant("field");
  return fc.oneof(
    required.length
      ? fc.constantFrom(...required).map((k) => {
          const { [k]: _dropped, ...rest } = base;
          return { value: rest, shape: `missing ${k}` };
        })
      : fc.constant({ value: base, shape: "as generated" }),
    fc.tuple(field, anyJson).map(([k, v]) => ({ value: { ...base, [k]: v }, shape: `${k}: any JSON` })),
    fc
      .tuple(field, hostileString)
      .map(([k, v]) => ({ value: { ...base, [k]: v }, shape: `${k}: hostile string` })),
    fc
      .tuple(field, hostileNumber)
      .map(([k, v]) => ({ value: { ...base, [k]: v }, shape: `${k}: hostile number` })),
    fc
      .tuple(fc.oneof(fc.constantFrom("__proto__", "constructor", "x\u0000y"), fc.string()), anyJson)
      .map(([k, v]) => ({ value: { ...base, [k]: v }, shape: `extra field ${JSON.stringify(k)}` })),
    // An object whose own toString or valueOf is not a function: String() and `${}` of it throw a
    // TypeError, so code that quotes a caller's value in a message must not use them (found by a random draw).
    fc
      .tuple(field, fc.constantFrom("toString", "valueOf"), anyJson)
      .map(([k, method, v]) => ({ value: { ...base, [k]: { [method]: v } }, shape: `${k}: own ${method}` })),
    fc.tuple(field, fc.constantFrom(5, 40, 500)).map(([k, depth]) => {
      let nested: unknown = "leaf";
      // One child per level (two would make a DAG whose JSON doubles with every level).
      for (let i = 0; i < depth; i++) nested = i % 2 ? { k: nested } : [nested];
      return { value: { ...base, [k]: nested }, shape: `${k}: nested ${depth}` };
    }),
    fc.tuple(field, fc.constantFrom("additional_data", "metadata")).map(([k, container]) => ({
      value: { ...base, [container]: { [k]: "\u0000", deep: { deeper: ["\u0001"] } } },
      shape: `${container} with control characters`,
    })),
  );
}

const otherContentTypes = fc.constantFrom(
  "text/plain",
  "application/x-www-form-urlencoded",
  "multipart/form-data; boundary=x",
  "application/json; charset=utf-16",
  "application/xml",
  "",
);

const otherMethods = ["GET", "POST", "PUT", "PATCH", "DELETE"];

/** Path parameter values: the known ones, and ids that are not. */
function pathValue(name: string, known: KnownValues): fc.Arbitrary<string> {
  const values = (known[name] ?? []).map(String);
  return fc.oneof(
    { arbitrary: values.length ? fc.constantFrom(...values) : fc.constant("1"), weight: 4 },
    fc.constantFrom("0", "-1", "2147483648", "99999999999999999999", "1e3", "abc", "%00", "%2e%2e", " 1"),
    fc.integer({ min: 1, max: 2 ** 31 - 1 }).map(String),
  );
}

function queryValue(schema: JsonSchema, known: KnownValues, name: string): fc.Arbitrary<string> {
  return fc.oneof(
    {
      arbitrary: schemaArbitrary(schema ?? {}, known, name).map((v) =>
        typeof v === "string" ? v : JSON.stringify(v),
      ),
      weight: 3,
    },
    hostileString.filter((s) => s.length < 3000),
  );
}

function authHeaders(
  credentials: Credentials,
): fc.Arbitrary<{ headers: Record<string, string>; label: string }> {
  const cases: [string, Record<string, string>][] = [
    ["no credential", {}],
    ["live key", { Authorization: `Bearer ${credentials.apiKey}` }],
    ["test key", { Authorization: `Bearer ${credentials.testApiKey}` }],
    ["session token", { Authorization: `Bearer ${credentials.sessionToken}` }],
    ["session cookie", { Cookie: `__Host-affiliate_session=${credentials.sessionToken}` }],
    ["empty Bearer", { Authorization: "Bearer " }],
    ["Basic", { Authorization: "Basic dXNlcjpwYXNz" }],
    ["lower-case scheme", { Authorization: `bearer ${credentials.apiKey}` }],
    ["unknown key", { Authorization: "Bearer ak_live_0000000000000000000000000000" }],
    ["long Bearer", { Authorization: `Bearer ${"k".repeat(8_000)}` }],
    ["garbage cookie", { Cookie: "__Host-affiliate_session=%00%ff; other=1" }],
  ];
  return fc.constantFrom(...cases).map(([label, headers]) => ({ label, headers }));
}

const badHeaders = fc.constantFrom<Record<string, string>>(
  {},
  {},
  { "X-Forwarded-For": "not-an-ip, 999.999.1.1" },
  { Origin: "null" },
  { Origin: "https://evil.example" },
  { Accept: "text/html" },
  { "X-Request-ID": "x".repeat(2_000) },
  { "Content-Encoding": "gzip" },
  { "Stripe-Signature": "t=1,v1=00" },
);

/** A distinct client address per request (the per-IP limiter is not what is measured), or a bad one. */
const clientAddress = fc.oneof(
  {
    arbitrary: fc.tuple(fc.nat(255), fc.nat(255), fc.nat(255)).map(([a, b, c]) => `10.${a}.${b}.${c}`),
    weight: 9,
  },
  fc.constantFrom("not-an-ip", "::1", "", "1.2.3.4, 5.6.7.8"),
);

export function requestArbitrary(
  document: OpenApiDocument,
  operations: Operation[],
  known: KnownValues,
  credentials: Credentials,
): fc.Arbitrary<FuzzRequest> {
  return fc.constantFrom(...operations).chain((operation) => {
    const pathParams = operation.parameters.filter((p) => p.in === "path");
    const queryParams = operation.parameters.filter((p) => p.in === "query");
    const jsonSchema = operation.requestBody?.content["application/json"]?.schema;
    const schema = jsonSchema ? dereference(document, jsonSchema) : undefined;
    const path = fc
      .tuple(...pathParams.map((p) => pathValue(p.name, known).map((v) => [p.name, v] as const)))
      .map((pairs) =>
        pairs.reduce((p, [name, value]) => p.replace(`{${name}}`, encodeURIComponent(value)), operation.path),
      );
    const query = fc
      .tuple(
        ...queryParams.map((p) =>
          fc.option(queryValue(p.schema, known, p.name).map((v) => [p.name, v] as const)),
        ),
      )
      .map((pairs) => {
        const search = new URLSearchParams();
        for (const pair of pairs) if (pair) search.set(pair[0], pair[1]);
        const text = search.toString();
        return text ? `?${text}` : "";
      });
    const body: fc.Arbitrary<{ body?: string; shape: string }> = schema
      ? fc.oneof(
          {
            arbitrary: schemaArbitrary(schema, known).map((v) => ({
              body: JSON.stringify(v),
              shape: "from the schema",
            })),
            weight: 3,
          },
          {
            arbitrary: (schemaArbitrary(schema, known) as fc.Arbitrary<Record<string, unknown>>)
              .chain((base) => mutated(typeof base === "object" && base ? base : {}, schema))
              .map(({ value, shape }) => ({ body: JSON.stringify(value), shape })),
            weight: 4,
          },
          { arbitrary: notAnObject.map((text) => ({ body: text, shape: "not a JSON object" })), weight: 2 },
          fc.constant({ shape: "no body" }),
        )
      : fc.oneof(
          { arbitrary: fc.constant({ shape: "no body" }), weight: 4 },
          anyJson.map((v) => ({ body: JSON.stringify(v), shape: "unexpected body" })),
        );
    const method = fc.oneof(
      { arbitrary: fc.constant(operation.method), weight: 9 },
      fc.constantFrom(...otherMethods.filter((m) => m !== operation.method)),
    );
    const contentType = fc.oneof(
      { arbitrary: fc.constant("application/json"), weight: 6 },
      otherContentTypes,
    );
    return fc
      .record({
        path,
        query,
        body,
        method,
        contentType,
        auth: authHeaders(credentials),
        extra: badHeaders,
        ip: clientAddress,
      })
      .map(({ path: p, query: q, body: b, method: m, contentType: ct, auth, extra, ip }) => {
        const withBody = m !== "GET" && b.body !== undefined;
        const headers: Record<string, string> = { ...auth.headers, ...extra };
        if (ip) headers["CF-Connecting-IP"] = ip;
        if (withBody && ct) headers["Content-Type"] = ct;
        const shape = `${m} ${p}${q.slice(0, 80)} | ${auth.label} | ${b.shape} | ${withBody ? ct || "no type" : "no body"}`;
        return {
          // fast-check prints a counterexample with this: the shape, not the whole operation.
          [fc.toStringMethod]: () => shape,
          operation,
          method: m,
          url: `https://api.test${p}${q}`,
          headers,
          ...(withBody ? { body: b.body } : {}),
          shape,
        };
      });
  });
}
