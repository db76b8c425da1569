import { createMiddleware } from "hono/factory";
import type { RateLimitPolicy } from "../ratelimit/types.ts";
import type { AppEnv } from "./app-env.ts";
import { rateLimit } from "./rate-limit.ts";

/** One rate-limit policy per HTTP method (GET and PATCH of settings count apart), `default` for the rest. */
export function rateLimitByMethod(
  policies: Partial<Record<string, RateLimitPolicy>> & { default: RateLimitPolicy },
) {
  const limiters = new Map(
    Object.entries(policies).map(([method, policy]) => [method, rateLimit(policy as RateLimitPolicy)]),
  );
  return createMiddleware<AppEnv>(async (c, next) => {
    const limiter = limiters.get(c.req.method) ?? limiters.get("default");
    return limiter!(c, next);
  });
}
