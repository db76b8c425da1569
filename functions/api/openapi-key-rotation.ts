import { z } from "@hono/zod-openapi";
import { ROTATION_MARKER } from "./key-rotation-documented.ts";

/**
 * Spec section 5, "Key rotation": on the routes a program key authenticates, a key marked for rotation still
 * works until its deadline, and every answer it gets carries the `Deprecation`, `Sunset` and `Link` headers
 * and a top-level `warnings` array (`keyRotationNotice`, lib/http/key-rotation-notice.ts); after the deadline
 * it answers 401 in the typed envelope. Routes say so with `keyRotationNoticeDocumented`
 * (key-rotation-documented.ts) in their OpenAPI configuration, and `describeKeyRotationNotice` writes it into
 * their responses when the document is built, so the workers carry none of it.
 */

export const RotationWarning = z
  .object({
    code: z.literal("api_key_rotation_required"),
    message: z.string(),
    hint: z.string(),
    rotate_by: z.string().openapi({ description: "ISO 8601 deadline after which the key answers 401." }),
    docs_url: z.string(),
  })
  .openapi("RotationWarning");

export const RetiredKeyError = z
  .object({
    error: z.object({
      code: z.literal("api_key_rotation_required"),
      message: z.string(),
      hint: z.string(),
      docs_url: z.string(),
    }),
  })
  .openapi("RetiredKeyError");

const schemaRef = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const headerRef = (name: string) => ({ $ref: `#/components/headers/${name}` });

const rotationHeaders = {
  Deprecation: {
    description: "When the API key sent was marked for rotation: `@<unix seconds>` (RFC 9745).",
    schema: { type: "string" },
  },
  Sunset: {
    description: "The key's rotation deadline, an HTTP-date (RFC 8594); after it the key answers 401.",
    schema: { type: "string" },
  },
  Link: {
    description: 'The rotation guide: `<docs_url>; rel="deprecation"`.',
    schema: { type: "string" },
  },
};

const warningsProperty = {
  type: "object",
  properties: {
    warnings: {
      type: "array",
      items: schemaRef("RotationWarning"),
      description:
        "Present when the API key sent is marked for rotation; a sibling of `data` on wrapped bodies.",
    },
  },
};

type Json = Record<string, unknown>;
type Response = { description?: string; headers?: Json; content?: Record<string, { schema?: Json }> };
type Operation = Json & { responses?: Record<string, Response> };
type Document = { paths?: Json; components?: Json };

/**
 * Answers the rotation notice cannot be on: 413 and 429 are given before the key is read, and a 401 means the
 * key did not authenticate (a retired key's 401 is described by adding its envelope instead).
 */
const beforeTheKey = new Set(["413", "429"]);

function describeOperation(operation: Operation): void {
  for (const [status, response] of Object.entries(operation.responses ?? {})) {
    if (beforeTheKey.has(status)) continue;
    const json = response.content?.["application/json"];
    if (status === "401") {
      if (json) {
        json.schema = { anyOf: [json.schema ?? {}, schemaRef("RetiredKeyError")] };
        response.description = `${response.description ?? ""}; or a key past its rotation deadline (typed envelope, \`api_key_rotation_required\`)`;
      }
      continue;
    }
    response.headers = {
      ...response.headers,
      Deprecation: headerRef("Deprecation"),
      Sunset: headerRef("Sunset"),
      Link: headerRef("Link"),
    };
    if (json) json.schema = { allOf: [json.schema ?? {}, warningsProperty] };
  }
}

/** Writes the notice into every marked operation's responses and removes the marker. */
export function describeKeyRotationNotice(document: Document): void {
  let marked = false;
  for (const item of Object.values(document.paths ?? {}) as Record<string, Operation>[]) {
    for (const operation of Object.values(item)) {
      if (!operation[ROTATION_MARKER]) continue;
      delete operation[ROTATION_MARKER];
      describeOperation(operation);
      marked = true;
    }
  }
  if (!marked) return;
  document.components ??= {};
  document.components.headers = { ...(document.components.headers as Json | undefined), ...rotationHeaders };
}
