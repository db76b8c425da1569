import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, inject, it } from "vitest";
import type { RateLimitPolicy } from "../../lib/ratelimit/types.ts";
import { UpstashRateLimiter } from "../../lib/ratelimit/upstash-limiter.ts";
import { UpstashRest } from "../../lib/ratelimit/upstash-rest.ts";
import { createProgram, freshIp } from "./harness.ts";
import {
  burst,
  clickUrl,
  expectLimitedAfter,
  expectMadeUpTokensCountedApart,
  refundUrl,
  type Send,
  type SendWithToken,
} from "./rate-limit-helpers.ts";
import worker from "./routed-workers.ts";

// Runs when REDIS_URL is set (CI sets it): the Upstash client against the real Redis, through the local
// Upstash REST endpoint the global setup starts. The worker is called with the Upstash bindings added.
const upstash = inject("upstash");
if (!upstash) throw new Error("REDIS_URL is set but the Upstash REST endpoint did not start");
describe("rate limit, Upstash limiter against the real Redis", () => {
  const upstashEnv = {
    ...env,
    UPSTASH_REDIS_REST_URL: upstash.url,
    UPSTASH_REDIS_REST_TOKEN: upstash.token,
  };
  const throughUpstash: Send = async (ip, body) => {
    const ctx = createExecutionContext();
    const response = await worker.fetch(
      new Request(clickUrl, {
        method: "POST",
        headers: { "Content-Type": "application/json", "CF-Connecting-IP": ip },
        body: JSON.stringify(body),
      }),
      upstashEnv as typeof env,
      ctx,
    );
    await waitOnExecutionContext(ctx);
    return response;
  };

  it("release takes back a counted call in its window only, never one it did not count", async () => {
    const limiter = new UpstashRateLimiter({ url: upstash.url, token: upstash.token });
    const redis = new UpstashRest({ url: upstash.url, token: upstash.token });
    const policy: RateLimitPolicy = {
      name: `release-${freshIp()}`,
      limit: 5,
      windowSeconds: 60,
      countedPer: "ip",
    };
    const counted = await limiter.check(policy, "ip:1");
    await limiter.check(policy, "ip:1");
    await limiter.release(policy, "ip:1", counted);
    expect((await limiter.peek(policy, "ip:1")).remaining).toBe(4);
    // A let-through the limiter did not count, and a window that has ended, take nothing back.
    await limiter.release(policy, "ip:1", { ...counted, uncounted: true });
    expect((await limiter.peek(policy, "ip:1")).remaining).toBe(4);
    const ended = { ...counted, resetAt: counted.resetAt - 120 };
    await limiter.release(policy, "ip:1", ended);
    const endedKey = `ratelimit:${policy.name}:ip:1:${(ended.resetAt * 1000) / 60_000 - 1}`;
    expect(await redis.command(["EXISTS", endedKey])).toBe(0);
    expect((await limiter.peek(policy, "ip:1")).remaining).toBe(4);
  });

  it("allows 60 per minute per IP with shared counts, then answers 429", async () => {
    const responses = await burst(throughUpstash, {}, 61);
    await expectLimitedAfter(responses, 60);
  });

  it("shows the IP bucket on a preflight without counting it", async () => {
    const ip = freshIp();
    const preflight = async () => {
      const ctx = createExecutionContext();
      const response = await worker.fetch(
        new Request(clickUrl, {
          method: "OPTIONS",
          headers: { Origin: "https://unlisted.example", "CF-Connecting-IP": ip },
        }),
        upstashEnv as typeof env,
        ctx,
      );
      await waitOnExecutionContext(ctx);
      return response.headers.get("X-RateLimit-Remaining");
    };
    expect(await preflight()).toBe("60");
    expect(await preflight()).toBe("60");
    for (let i = 0; i < 3; i++) await throughUpstash(ip, {});
    expect(await preflight()).toBe("57");
  });

  it("costs at most one Redis round trip per request once warm", async () => {
    const ip = freshIp();
    await throughUpstash(ip, {});
    const realFetch = globalThis.fetch;
    let redisCalls = 0;
    globalThis.fetch = (input, init) => {
      const url = input instanceof Request ? input.url : String(input);
      if (url.startsWith(upstash.url)) redisCalls++;
      return realFetch(input, init);
    };
    try {
      await throughUpstash(ip, {});
    } finally {
      globalThis.fetch = realFetch;
    }
    expect(redisCalls).toBe(1);
  });

  it("counts every token on sale and refund in its own bucket: made-up tokens from one address refuse no key", async () => {
    const refundThroughUpstash: SendWithToken = async (ip, token) => {
      const ctx = createExecutionContext();
      const response = await worker.fetch(
        new Request(refundUrl, {
          method: "POST",
          headers: {
            "Content-Type": "application/json",
            "CF-Connecting-IP": ip,
            Authorization: `Bearer ${token}`,
          },
          body: JSON.stringify({ transaction_id: `txn-${crypto.randomUUID()}` }),
        }),
        upstashEnv as typeof env,
        ctx,
      );
      await waitOnExecutionContext(ctx);
      return response;
    };
    const [known, fresh] = [await createProgram(), await createProgram()];
    await expectMadeUpTokensCountedApart(refundThroughUpstash, known.apiKey, fresh.apiKey);
  });
});
