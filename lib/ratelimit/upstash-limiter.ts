import { errorFields, rootLogger } from "../log.ts";
import type { RateLimiter, RateLimitPolicy, RateLimitResult } from "./types.ts";
import { UpstashRest } from "./upstash-rest.ts";

/**
 * The fixed window as one atomic script: count the call, and start the window's expiry with its first call.
 * (The same steps, keys and replies as `@upstash/ratelimit`'s `fixedWindow`, which this replaces.)
 */
const FIXED_WINDOW_SCRIPT = `local used = redis.call("INCRBY", KEYS[1], 1)
if used == 1 then
  redis.call("PEXPIRE", KEYS[1], ARGV[1])
end
return used`;

/** Takes one call back from a window's count, only while that window's key exists (it expires with it). */
const RELEASE_SCRIPT = `if redis.call("EXISTS", KEYS[1]) == 1 then
  return redis.call("DECR", KEYS[1])
end
return -1`;

/**
 * Shared counts across every instance through Upstash's REST API. A caller over the limit is remembered in
 * this isolate until its window ends, and answered without a Redis trip. If Redis does not answer within
 * `timeoutMs` (or fails) the request is let through: a limiter outage must not take tracking down.
 */
export class UpstashRateLimiter implements RateLimiter {
  private readonly redis: UpstashRest;
  private readonly timeoutMs: number;
  /** Key -> end of the window (ms) for callers already refused in it. */
  private readonly blockedUntil = new Map<string, number>();
  private scriptSha1: Promise<string> | undefined;
  private releaseSha1: Promise<string> | undefined;

  constructor(options: { url: string; token: string; timeoutMs?: number }) {
    // One quick retry at most: the limiter must answer within its timeout or step aside.
    this.redis = new UpstashRest({ url: options.url, token: options.token, retries: 1, retryDelayMs: 50 });
    this.timeoutMs = options.timeoutMs ?? 1000;
  }

  async check(policy: RateLimitPolicy, key: string): Promise<RateLimitResult> {
    const { now, windowMs, windowEnd, identifier, bucketKey } = windowOf(policy, key);
    const blockedUntil = this.blockedUntil.get(identifier);
    if (blockedUntil !== undefined) {
      if (blockedUntil >= now) return refused(policy, blockedUntil);
      this.blockedUntil.delete(identifier);
    }
    try {
      const used = await this.withinTimeout(this.count(bucketKey, windowMs));
      if (used !== "timeout") {
        if (used > policy.limit) {
          this.blockedUntil.set(identifier, windowEnd);
          return refused(policy, windowEnd);
        }
        return {
          allowed: true,
          limit: policy.limit,
          remaining: policy.limit - used,
          resetAt: Math.ceil(windowEnd / 1000),
        };
      }
      rootLogger.warn("rate limiter timed out; request let through", { policy: policy.name });
    } catch (error) {
      rootLogger.error("rate limiter failed; request let through", error, { policy: policy.name });
    }
    return letThrough(policy, windowEnd);
  }

  /** One `GET` of the window's count (none when this isolate already refused the caller in it). */
  async peek(policy: RateLimitPolicy, key: string): Promise<RateLimitResult> {
    const { now, windowEnd, identifier, bucketKey } = windowOf(policy, key);
    if ((this.blockedUntil.get(identifier) ?? 0) >= now) return refused(policy, windowEnd);
    try {
      const used = await this.withinTimeout(this.redis.command(["GET", bucketKey]));
      if (used !== "timeout") {
        const count = used === null ? 0 : Number(used);
        if (!Number.isInteger(count)) throw new Error(`unexpected rate limit count: ${String(used)}`);
        return {
          allowed: count < policy.limit,
          limit: policy.limit,
          remaining: Math.max(0, policy.limit - count),
          resetAt: Math.ceil(windowEnd / 1000),
        };
      }
    } catch (error) {
      rootLogger.warn("rate limiter peek failed; the policy's own figures shown", {
        policy: policy.name,
        ...errorFields(error),
      });
    }
    return letThrough(policy, windowEnd);
  }

  /** One script call; a failure is logged, not thrown: the count is then one too high until its window ends. */
  async release(policy: RateLimitPolicy, key: string, counted: RateLimitResult): Promise<void> {
    if (counted.uncounted) return;
    // The window the call was counted in: its last millisecond falls in it.
    const { bucketKey } = windowOf(policy, key, counted.resetAt * 1000 - 1);
    try {
      this.releaseSha1 ??= sha1Hex(RELEASE_SCRIPT);
      const released = this.redis.script(
        { text: RELEASE_SCRIPT, sha1: await this.releaseSha1 },
        [bucketKey],
        [],
      );
      if ((await this.withinTimeout(released)) === "timeout") {
        rootLogger.warn("rate limiter release timed out", { policy: policy.name });
      }
    } catch (error) {
      rootLogger.warn("rate limiter release failed", { policy: policy.name, ...errorFields(error) });
    }
  }

  /** The call's answer, or `timeout` when Redis has not answered within `timeoutMs`. */
  private async withinTimeout<T>(call: Promise<T>): Promise<T | "timeout"> {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timedOut = new Promise<"timeout">((resolve) => {
      timer = setTimeout(() => resolve("timeout"), this.timeoutMs);
    });
    try {
      return await Promise.race([call, timedOut]);
    } finally {
      clearTimeout(timer);
    }
  }

  private async count(bucketKey: string, windowMs: number): Promise<number> {
    this.scriptSha1 ??= sha1Hex(FIXED_WINDOW_SCRIPT);
    const used = await this.redis.script(
      { text: FIXED_WINDOW_SCRIPT, sha1: await this.scriptSha1 },
      [bucketKey],
      [windowMs],
    );
    if (typeof used !== "number") throw new Error(`unexpected rate limit count: ${typeof used}`);
    return used;
  }
}

/** The fixed window `now` falls in, and the Redis key of the caller's count in it. */
function windowOf(policy: RateLimitPolicy, key: string, now = Date.now()) {
  const windowMs = policy.windowSeconds * 1000;
  const bucket = Math.floor(now / windowMs);
  const identifier = `ratelimit:${policy.name}:${key}`;
  return {
    now,
    windowMs,
    windowEnd: (bucket + 1) * windowMs,
    identifier,
    bucketKey: `${identifier}:${bucket}`,
  };
}

function refused(policy: RateLimitPolicy, windowEndMs: number): RateLimitResult {
  return { allowed: false, limit: policy.limit, remaining: 0, resetAt: Math.ceil(windowEndMs / 1000) };
}

/** The answer while Redis is unavailable: allowed, with the policy's own figures for the headers. */
function letThrough(policy: RateLimitPolicy, windowEndMs: number): RateLimitResult {
  return {
    allowed: true,
    limit: policy.limit,
    remaining: policy.limit,
    resetAt: Math.ceil(windowEndMs / 1000),
    uncounted: true,
  };
}

async function sha1Hex(text: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-1", new TextEncoder().encode(text));
  return Array.from(new Uint8Array(digest), (byte) => byte.toString(16).padStart(2, "0")).join("");
}
