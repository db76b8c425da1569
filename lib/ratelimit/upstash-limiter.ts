import { Ratelimit } from "@upstash/ratelimit";
import { Redis } from "@upstash/redis/cloudflare";
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
    this.redis = new Redis({ url: options.url, token: options.token, enableTelemetry: false });
    this.timeoutMs = options.timeoutMs ?? 1000;
  }

  private readonly timeoutMs: number;

  async check(policy: RateLimitPolicy, key: string): Promise<RateLimitResult> {
    const response = await this.limiterFor(policy).limit(key);
    return {
      allowed: response.success,
      limit: response.limit,
      remaining: Math.max(0, response.remaining),
      resetAt: Math.ceil(response.reset / 1000),
    };
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
