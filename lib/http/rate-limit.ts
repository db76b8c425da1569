import { createMiddleware } from "hono/factory";
import { sha256Hex } from "../auth/api-keys.ts";
import { requestCredential } from "../auth/request-credential.ts";
import { cookieValue, SESSION_COOKIE } from "../auth/sign-in-tokens.ts";
import { typedError } from "../errors/api-error.ts";
import { renderError } from "../errors/envelopes.ts";
import { countRequest, settleToken } from "../ratelimit/count-request.ts";
import { KnownKeys } from "../ratelimit/known-keys.ts";
import type { RateLimitPolicy, RateLimitResult } from "../ratelimit/types.ts";
import type { AppEnv } from "./app-env.ts";
import { clientIp } from "./client-ip.ts";

// Per isolate, like the in-memory counts: keys whose hash matched a stored key on a keyed route.
const authenticatedKeys = new KnownKeys();

/**
 * Applies one policy before the endpoint runs: a refused request never reaches it, so nothing is recorded.
 * Every response, errors included, carries the `X-RateLimit-*` headers; a 429 also `Retry-After` (seconds).
 */
export function rateLimit(policy: RateLimitPolicy) {
  return createMiddleware<AppEnv>(async (c, next) => {
    // A request is counted once, by the first limiter it meets (its route's, before a family's catch-all).
    if (c.get("rateLimitCounted")) return next();
    c.set("rateLimitCounted", true);
    // The dashboard page sends its sign-in token in a cookie; it counts like the same token as Bearer.
    let keyHash: string | null = null;
    if (policy.countedPer === "token") {
      keyHash = policy.sessionCookieOnly ? null : (await requestCredential(c)).keyHash;
      const cookie = keyHash ? undefined : cookieValue(c.req.header("Cookie"), SESSION_COOKIE);
      if (cookie) keyHash = await sha256Hex(cookie);
    }
    const limiter = c.get("deps").rateLimiter;
    const ip = clientIp(c);
    const counted = await countRequest(limiter, policy, keyHash, ip, authenticatedKeys);
    const result = counted.shown;
    if (!result.allowed) {
      const retryAfter = retryAfterSeconds(result, c.get("deps").clock.now());
      const refused = typedError(429, "rate_limited", rateLimitedMessage(retryAfter), {
        status: 429,
        retry_after_seconds: retryAfter,
      });
      const response = c.json(renderError(refused, c.get("errorPolicy")), 429);
      setHeaders(response.headers, result);
      response.headers.set("Retry-After", String(retryAfter));
      return response;
    }
    await next();
    setHeaders(c.res.headers, result);
    if (keyHash) {
      const authenticated = c.get("authenticatedKeyHash") === keyHash;
      await settleToken(limiter, policy, keyHash, ip, authenticatedKeys, counted, authenticated);
    }
  });
}

/**
 * Spec section 8: every response on a limited route carries the `X-RateLimit-*` headers, a CORS preflight's
 * too. The CORS middleware answers a preflight before the limiter and it is not counted (the call it announces
 * is); placed before that middleware, this adds the headers of the caller's IP bucket as it stands (a preflight
 * carries no credentials, and the browser routes count per IP).
 */
export function preflightRateLimitHeaders(policy: RateLimitPolicy) {
  return createMiddleware<AppEnv>(async (c, next) => {
    if (c.req.method !== "OPTIONS") return next();
    await next();
    setHeaders(c.res.headers, await c.get("deps").rateLimiter.peek(policy, `ip:${clientIp(c)}`));
  });
}

function retryAfterSeconds(result: RateLimitResult, now: Date): number {
  return Math.max(1, result.resetAt - Math.floor(now.getTime() / 1000));
}

function setHeaders(headers: Headers, result: RateLimitResult): void {
  headers.set("X-RateLimit-Limit", String(result.limit));
  headers.set("X-RateLimit-Remaining", String(result.remaining));
  headers.set("X-RateLimit-Reset", String(result.resetAt));
}

/** The 429's message: the wait in whole seconds, as `Retry-After` and `retry_after_seconds` give it. */
export function rateLimitedMessage(retryAfterSeconds: number): string {
  return `Too many requests. Retry after ${retryAfterSeconds} ${retryAfterSeconds === 1 ? "second" : "seconds"}.`;
}
