import { createMiddleware } from "hono/factory";
import type { AppEnv } from "./app-env.ts";

const exposedHeaders = [
  "X-Request-ID",
  "X-RateLimit-Limit",
  "X-RateLimit-Remaining",
  "X-RateLimit-Reset",
  "Retry-After",
].join(", ");

/**
 * CORS for public reads (the tracker config): any origin may read the answer, errors and 429s included.
 * No credentials are involved, and the answer holds nothing but a program's public tracker settings and
 * whether the caller's own origin is allowed, which is exactly what a page that is not allowed must be
 * able to learn. The answer depends on `Origin`, hence `Vary: Origin`.
 */
export function publicCors(methods: string) {
  return createMiddleware<AppEnv>(async (c, next) => {
    if (c.req.method === "OPTIONS") {
      return new Response(null, {
        status: 204,
        headers: {
          "Access-Control-Allow-Origin": "*",
          "Access-Control-Allow-Methods": `${methods}, OPTIONS`,
          "Access-Control-Allow-Headers": "Content-Type, X-Request-ID",
          "Access-Control-Max-Age": "600",
        },
      });
    }
    await next();
    c.res.headers.append("Vary", "Origin");
    c.res.headers.set("Access-Control-Allow-Origin", "*");
    c.res.headers.set("Access-Control-Expose-Headers", exposedHeaders);
  });
}
