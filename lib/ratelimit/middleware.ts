import { createMiddleware } from "hono/factory";
import { sha256Hex } from "../auth/api-keys.ts";
import { bearerToken } from "../auth/bearer.ts";
import { typedError } from "../errors/api-error.ts";
import { renderError } from "../errors/envelopes.ts";
import type { AppEnv } from "../http/app-env.ts";
import { clientIp } from "../http/client-ip.ts";
import type { RateLimitPolicy, RateLimitResult } from "./types.ts";

/**
 * Applies one policy before the endpoint runs: a refused request never reaches it, so nothing is recorded.
 * Every response, errors included, carries the `X-RateLimit-*` headers; a 429 also `Retry-After` (seconds).
 */
export function rateLimit(policy: RateLimitPolicy) {
  return createMiddleware<AppEnv>(async (c, next) => {
    const key = await bucketKey(policy, c.req.header("Authorization"), clientIp(c));
    const result = await c.get("deps").rateLimiter.check(policy, key);
    if (!result.allowed) {
      const retryAfter = retryAfterSeconds(result, c.get("deps").clock.now());
      const refused = typedError(
        429,
        "rate_limited",
        `Too many requests. Retry after ${retryAfter} seconds.`,
        { status: 429, retry_after_seconds: retryAfter },
      );
      const response = c.json(renderError(refused, c.get("errorPolicy")), 429);
      setHeaders(response.headers, result);
      response.headers.set("Retry-After", String(retryAfter));
      return response;
    }
    await next();
    setHeaders(c.res.headers, result);
  });
}

async function bucketKey(
  policy: RateLimitPolicy,
  authorization: string | undefined,
  ip: string,
): Promise<string> {
  if (policy.countedPer === "token") {
    const token = bearerToken(authorization);
    // Keys are never stored in Redis in clear: the bucket is named by the token's hash.
    if (token) return `key:${(await sha256Hex(token)).slice(0, 32)}`;
  }
  return `ip:${ip}`;
}

function retryAfterSeconds(result: RateLimitResult, now: Date): number {
  return Math.max(1, result.resetAt - Math.floor(now.getTime() / 1000));
}

function setHeaders(headers: Headers, result: RateLimitResult): void {
  headers.set("X-RateLimit-Limit", String(result.limit));
  headers.set("X-RateLimit-Remaining", String(result.remaining));
  headers.set("X-RateLimit-Reset", String(result.resetAt));
}
