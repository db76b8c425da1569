import { z } from "@hono/zod-openapi";

const TypedError = z
  .object({
    error: z
      .object({
        code: z.string(),
        message: z.string(),
        retry_after_seconds: z.number().int().optional(),
        hint: z.string().optional(),
        docs_url: z.string().optional(),
      })
      .passthrough(),
  })
  .openapi("TypedError");

/** A response in the spec's typed envelope (`{error: {code, message, ...}}`, no `data`). */
export function typedErrorResponse(description: string) {
  return {
    description,
    headers: { "X-Request-ID": { schema: { type: "string" as const }, description: "Request id" } },
    content: { "application/json": { schema: TypedError } },
  };
}
