/** A per-minute limit of one route family (spec section 8). */
export interface RateLimitPolicy {
  /** Bucket namespace; routes that share a limit (sale and refund) share a name. */
  name: string;
  limit: number;
  windowSeconds: number;
  /** Keyless routes count per client IP; the others per Bearer token, falling back to IP. */
  countedPer: "ip" | "token";
  /**
   * Count the session cookie only, never a Bearer header: the dashboard page reads the cookie alone, so a
   * Bearer sent beside it must not choose the bucket.
   */
  sessionCookieOnly?: true;
}

export interface RateLimitResult {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Unix seconds when the current window ends. */
  resetAt: number;
  /** Let through without being counted (the shared limiter failed or timed out): nothing to `release`. */
  uncounted?: true;
}

/** The rate-limit port: Upstash in production, an in-memory fixed window per instance otherwise. */
export interface RateLimiter {
  check(policy: RateLimitPolicy, key: string): Promise<RateLimitResult>;
  /** The bucket as it stands, without counting a call (`allowed`: whether a call now would be). */
  peek(policy: RateLimitPolicy, key: string): Promise<RateLimitResult>;
  /**
   * Takes back one call `check` counted and let through (`counted`, its answer), in the window it was counted
   * in; nothing once that window has ended.
   */
  release(policy: RateLimitPolicy, key: string, counted: RateLimitResult): Promise<void>;
}
