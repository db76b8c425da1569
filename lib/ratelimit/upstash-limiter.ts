import { Ratelimit } from "@upstash/ratelimit";
import { Redis } from "@upstash/redis/cloudflare";
import { rootLogger } from "../log.ts";
import type { RateLimiter, RateLimitPolicy, RateLimitResult } from "./types.ts";

/**
 * Shared counts across every instance through Upstash. One `Ratelimit` per policy, created once per isolate
 * (its ephemeral cache then answers already-blocked callers without a Redis trip). If Redis does not
 * answer within `timeoutMs` the request is let through: a limiter outage must not take tracking down.
 */
export class UpstashRateLimiter implements RateLimiter {
  private readonly redis: Redis;
  private readonly limiters = new Map<string, Ratelimit>();

  constructor(options: { url: string; token: string; timeoutMs?: number }) {
    // One quick retry at most: the limiter must answer within its timeout or step aside.
    this.redis = new Redis({
      url: options.url,
      token: options.token,
      enableTelemetry: false,
      retry: { retries: 1, backoff: () => 50 },
    });
    this.timeoutMs = options.timeoutMs ?? 1000;
  }

  private readonly timeoutMs: number;

  async check(policy: RateLimitPolicy, key: string): Promise<RateLimitResult> {
    try {
      const response = await this.limiterFor(policy).limit(key);
      if (response.reason !== "timeout") {
        return {
          allowed: response.success,
          limit: response.limit,
          remaining: Math.max(0, response.remaining),
          resetAt: Math.ceil(response.reset / 1000),
        };
      }
      rootLogger.warn("rate limiter timed out; request let through", { policy: policy.name });
    } catch (error) {
      rootLogger.error("rate limiter failed; request let through", error, { policy: policy.name });
    }
    return letThrough(policy);
  }

  private limiterFor(policy: RateLimitPolicy): Ratelimit {
    let limiter = this.limiters.get(policy.name);
    if (!limiter) {
      limiter = new Ratelimit({
        redis: this.redis,
        limiter: Ratelimit.fixedWindow(policy.limit, `${policy.windowSeconds} s`),
        prefix: `ratelimit:${policy.name}`,
        ephemeralCache: new Map(),
        analytics: false,
        timeout: this.timeoutMs,
      });
      this.limiters.set(policy.name, limiter);
    }
    return limiter;
  }
}

/** The answer while Redis is unavailable: allowed, with the policy's own figures for the headers. */
function letThrough(policy: RateLimitPolicy): RateLimitResult {
  const windowMs = policy.windowSeconds * 1000;
  const windowEnd = (Math.floor(Date.now() / windowMs) + 1) * windowMs;
  return {
    allowed: true,
    limit: policy.limit,
    remaining: policy.limit,
    resetAt: Math.ceil(windowEnd / 1000),
  };
}
