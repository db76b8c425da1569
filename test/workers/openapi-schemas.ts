import { Validator } from "@cfworker/json-schema";

/**
 * The served OpenAPI document read as data: its operations, and a validator of a response against the
 * schema the document gives for that operation and status. The validator is @cfworker/json-schema (draft
 * 2020-12, the dialect of OpenAPI 3.1): it runs in workerd, where code generation from strings (Ajv) is off.
 */
// biome-ignore lint/suspicious/noExplicitAny: JSON Schema objects are walked key by key.
export type JsonSchema = any;

export interface DocumentedResponse {
  content?: Record<string, { schema?: JsonSchema }>;
  headers?: Record<string, unknown>;
}

export interface Parameter {
  name: string;
  in: "path" | "query" | "header" | "cookie";
  required?: boolean;
  schema?: JsonSchema;
}

export interface Operation {
  method: string;
  /** The OpenAPI path, `{id}` style. */
  path: string;
  operationId: string;
  security: Record<string, string[]>[];
  parameters: Parameter[];
  requestBody?: { content: Record<string, { schema?: JsonSchema }>; required?: boolean };
  responses: Record<string, DocumentedResponse>;
}

export interface OpenApiDocument {
  openapi: string;
  paths: Record<string, Record<string, Omit<Operation, "method" | "path">>>;
  components: { schemas: Record<string, JsonSchema> };
}

export function operationsOf(document: OpenApiDocument): Operation[] {
  return Object.entries(document.paths).flatMap(([path, item]) =>
    Object.entries(item).map(([method, operation]) => ({
      ...operation,
      method: method.toUpperCase(),
      path,
      parameters: operation.parameters ?? [],
      security: operation.security ?? [],
    })),
  );
}

/** The schema with every `#/components/schemas/X` reference replaced by the component (the document has no cycles). */
export function dereference(document: OpenApiDocument, schema: JsonSchema, seen: string[] = []): JsonSchema {
  if (Array.isArray(schema)) return schema.map((item) => dereference(document, item, seen));
  if (schema === null || typeof schema !== "object") return schema;
  if (typeof schema.$ref === "string") {
    const name = schema.$ref.replace("#/components/schemas/", "");
    if (seen.includes(name)) throw new Error(`cyclic schema ${name}`);
    const { $ref: _ref, ...rest } = schema;
    return { ...dereference(document, document.components.schemas[name], [...seen, name]), ...rest };
  }
  return Object.fromEntries(
    Object.entries(schema).map(([key, value]) => [key, dereference(document, value, seen)]),
  );
}

const validators = new WeakMap<object, Validator>();

/** The errors of `body` against the documented JSON schema of this operation's `status`, or a reason it has none. */
export function responseProblems(
  document: OpenApiDocument,
  operation: Operation,
  status: number,
  contentType: string | null,
  body: unknown,
): string[] {
  const documented = operation.responses[String(status)];
  if (!documented) return [`status ${status} is not documented for ${operation.method} ${operation.path}`];
  const json = documented.content?.["application/json"];
  if (!json) {
    // A redirect or a non-JSON answer: the document promises no JSON body.
    return documented.content && !contentType?.includes(Object.keys(documented.content)[0] ?? "")
      ? [`content type ${contentType} is not the documented ${Object.keys(documented.content).join(", ")}`]
      : [];
  }
  if (!contentType?.includes("application/json")) return [`content type ${contentType} is not JSON`];
  let validator = validators.get(json);
  if (!validator) {
    validator = new Validator(dereference(document, json.schema ?? {}), "2020-12", false);
    validators.set(json, validator);
  }
  const result = validator.validate(body);
  return result.valid
    ? []
    : result.errors.map((e) => `${e.instanceLocation} ${e.keyword}: ${e.error}`).slice(0, 5);
}

export async function loadDocument(fetcher: { fetch: typeof fetch }): Promise<OpenApiDocument> {
  const response = await fetcher.fetch("https://api.test/openapi.json");
  if (response.status !== 200) throw new Error(`/openapi.json answered ${response.status}`);
  return (await response.json()) as OpenApiDocument;
}
