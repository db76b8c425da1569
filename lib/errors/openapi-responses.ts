import { z } from "@hono/zod-openapi";

const PlatformError = z
  .object({
    data: z.null(),
    error: z.object({
      status: z.number().int(),
      name: z.string(),
      message: z.string(),
      details: z.record(z.string(), z.unknown()),
      code: z.string().optional(),
    }),
  })
  .openapi("PlatformError");

const RateLimited = z
  .object({
    error: z.object({
      status: z.literal(429),
      code: z.literal("rate_limited"),
      message: z.string(),
      retry_after_seconds: z.number().int(),
    }),
  })
  .openapi("RateLimited");

const rateLimitHeaders = {
  "X-RateLimit-Limit": { schema: { type: "integer" as const }, description: "Limit of the bucket" },
  "X-RateLimit-Remaining": {
    schema: { type: "integer" as const },
    description: "Requests left in the window",
  },
  "X-RateLimit-Reset": {
    schema: { type: "integer" as const },
    description: "Unix seconds when the window resets",
  },
  "X-Request-ID": { schema: { type: "string" as const }, description: "Request id" },
};

export function platformErrorResponse(description: string) {
  return { description, content: { "application/json": { schema: PlatformError } } };
}

export const payloadTooLargeResponse = {
  description: "The body is larger than 64 KB (65536 bytes); nothing was recorded.",
  content: { "application/json": { schema: PlatformError } },
};

export const rateLimitedResponse = {
  description: "Rate limited; nothing was recorded. `Retry-After` gives the wait in seconds.",
  headers: { ...rateLimitHeaders, "Retry-After": { schema: { type: "integer" as const } } },
  content: { "application/json": { schema: RateLimited } },
};

export function okResponse<T extends z.ZodType>(description: string, schema: T) {
  return { description, headers: rateLimitHeaders, content: { "application/json": { schema } } };
}
