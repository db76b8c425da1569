import type { Clock } from "../clock.ts";
import type { RateLimiter, RateLimitPolicy, RateLimitResult } from "./types.ts";

/**
 * Fixed windows aligned to the epoch, the same shape as Upstash's `fixedWindow`, kept in this isolate's
 * memory: the spec's "each instance keeps its own in-memory counts".
 */
export class MemoryRateLimiter implements RateLimiter {
  private readonly windows = new Map<string, { windowStart: number; count: number }>();
  private checksSinceSweep = 0;

  constructor(private readonly clock: Clock) {}

  async check(policy: RateLimitPolicy, key: string): Promise<RateLimitResult> {
    const nowMs = this.clock.now().getTime();
    const windowMs = policy.windowSeconds * 1000;
    const windowStart = Math.floor(nowMs / windowMs) * windowMs;
    const bucket = `${policy.name}:${key}`;
    const current = this.windows.get(bucket);
    const state = current && current.windowStart === windowStart ? current : { windowStart, count: 0 };
    state.count += 1;
    this.windows.set(bucket, state);
    this.sweepNowAndThen(nowMs, windowMs);
    return {
      allowed: state.count <= policy.limit,
      limit: policy.limit,
      remaining: Math.max(0, policy.limit - state.count),
      resetAt: Math.ceil((windowStart + windowMs) / 1000),
    };
  }

  /** Old windows are dropped now and then so a long-lived isolate does not grow without bound. */
  private sweepNowAndThen(nowMs: number, windowMs: number): void {
    this.checksSinceSweep += 1;
    if (this.checksSinceSweep < 1000) return;
    this.checksSinceSweep = 0;
    for (const [bucket, state] of this.windows) {
      if (state.windowStart + windowMs <= nowMs) this.windows.delete(bucket);
    }
  }
}
