import { createMiddleware } from "hono/factory";
import { systemClock } from "../clock.ts";
import { readConfig } from "../config/env.ts";
import { databaseFor } from "../db/client.ts";
import { defaultErrorPolicy, type ErrorPolicy } from "../errors/envelopes.ts";
import { MemoryRateLimiter } from "../ratelimit/memory-limiter.ts";
import type { RateLimiter } from "../ratelimit/types.ts";
import { UpstashRateLimiter } from "../ratelimit/upstash-limiter.ts";
import type { AppEnv } from "./app-env.ts";

// Per isolate: the in-memory counts must outlive a request, and the Upstash client keeps its script cache.
let limiter: { key: string; limiter: RateLimiter } | undefined;

function rateLimiterFor(upstash: { url: string; token: string } | undefined): RateLimiter {
  const key = upstash ? `${upstash.url}|${upstash.token}` : "memory";
  if (limiter?.key !== key) {
    limiter = {
      key,
      limiter: upstash ? new UpstashRateLimiter(upstash) : new MemoryRateLimiter(systemClock),
    };
  }
  return limiter.limiter;
}

/** Builds the typed per-request context from validated env; handlers never touch `c.env` directly. */
export const dependencies = createMiddleware<AppEnv>(async (c, next) => {
  const config = readConfig(c.env);
  c.set("errorPolicy", defaultErrorPolicy);
  c.set("deps", {
    config,
    db: databaseFor(config),
    rateLimiter: rateLimiterFor(config.upstash),
    clock: systemClock,
  });
  await next();
});

export function errorPolicy(
  failureMessage: string,
  stableCodes = false,
  typedFailure?: ErrorPolicy["typedFailure"],
) {
  return createMiddleware<AppEnv>(async (c, next) => {
    c.set("errorPolicy", { failureMessage, stableCodes, ...(typedFailure ? { typedFailure } : {}) });
    await next();
  });
}
