import { createMiddleware } from "hono/factory";
import { sha256Hex } from "../auth/api-keys.ts";
import { requestCredential } from "../auth/request-credential.ts";
import { cookieValue, SESSION_COOKIE } from "../auth/sign-in-tokens.ts";
import { typedError } from "../errors/api-error.ts";
import { renderError } from "../errors/envelopes.ts";
import { KnownKeys } from "../ratelimit/known-keys.ts";
import type { RateLimiter, RateLimitPolicy, RateLimitResult } from "../ratelimit/types.ts";
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
    // The dashboard page sends its sign-in token in a cookie; it counts like the same token as Bearer.
    let keyHash: string | null = null;
    if (policy.countedPer === "token") {
      keyHash = (await requestCredential(c)).keyHash;
      const cookie = keyHash ? undefined : cookieValue(c.req.header("Cookie"), SESSION_COOKIE);
      if (cookie) keyHash = await sha256Hex(cookie);
    }
    const counted = await checkBuckets(c.get("deps").rateLimiter, policy, keyHash, clientIp(c));
    const result = counted.shown;
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
    const authenticated = keyHash !== null && c.get("authenticatedKeyHash") === keyHash;
    // A key that authenticated shows its own bucket, on its first request in this isolate too: the spec's
    // bucket is the key's. (Only a first request its IP's bucket refused, above, shows that bucket: the key
    // is not known to be real before its read, which a refused request never reaches.)
    setHeaders(c.res.headers, authenticated && counted.ownBucket ? counted.ownBucket : result);
    if (authenticated && keyHash) authenticatedKeys.remember(keyHash);
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

/**
 * What the limiter counted: `shown` decides a refusal and is the headers' bucket, unless the token turns out
 * to authenticate, which then shows `ownBucket` (the token's own count; null without a token or when the
 * token's bucket was not reached).
 */
interface Counted {
  shown: RateLimitResult;
  ownBucket: RateLimitResult | null;
}

/**
 * Spec section 8: keyed routes count per Bearer token, falling back to IP when none is sent. A token this
 * isolate has seen authenticate counts in its own bucket only. Any other token counts in the caller's IP
 * bucket first, so made-up tokens cannot each get a fresh allowance, and then, if the IP still has room, in
 * its own bucket too: a real key's first request in this isolate is counted where all its others are (the
 * limit holds exactly), and one wrong token sent from many addresses is limited as one token. A token that
 * does not authenticate shows the bucket with less room. Keys never reach Redis in clear: the bucket is the
 * token's hash.
 */
async function checkBuckets(
  limiter: RateLimiter,
  policy: RateLimitPolicy,
  keyHash: string | null,
  ip: string,
): Promise<Counted> {
  const tokenBucket = keyHash ? `key:${keyHash.slice(0, 32)}` : null;
  if (!tokenBucket) return { shown: await limiter.check(policy, `ip:${ip}`), ownBucket: null };
  if (keyHash && authenticatedKeys.has(keyHash)) {
    const own = await limiter.check(policy, tokenBucket);
    return { shown: own, ownBucket: own };
  }
  const byIp = await limiter.check(policy, `ip:${ip}`);
  if (!byIp.allowed) return { shown: byIp, ownBucket: null };
  const byToken = await limiter.check(policy, tokenBucket);
  const shown = !byToken.allowed || byToken.remaining < byIp.remaining ? byToken : byIp;
  return { shown, ownBucket: byToken };
}

function retryAfterSeconds(result: RateLimitResult, now: Date): number {
  return Math.max(1, result.resetAt - Math.floor(now.getTime() / 1000));
}

function setHeaders(headers: Headers, result: RateLimitResult): void {
  headers.set("X-RateLimit-Limit", String(result.limit));
  headers.set("X-RateLimit-Remaining", String(result.remaining));
  headers.set("X-RateLimit-Reset", String(result.resetAt));
}
