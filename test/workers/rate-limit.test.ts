import { createExecutionContext, SELF, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, inject, it } from "vitest";
import worker from "../../functions/api/index.ts";
import { clicksOfProgram, createProgram, freshIp } from "./harness.ts";

const clickUrl = "https://api.test/api/v1/track/click";

type Send = (ip: string, body: unknown) => Promise<Response>;

const throughSelf: Send = (ip, body) =>
  SELF.fetch(clickUrl, {
    method: "POST",
    headers: { "Content-Type": "application/json", "CF-Connecting-IP": ip },
    body: JSON.stringify(body),
  });

/**
 * Sends limit+1 requests from one IP. A fixed window can roll over mid-burst; then the burst is retried,
 * so the assertions always see one whole window.
 */
async function burst(send: Send, body: unknown, count: number): Promise<Response[]> {
  for (let attempt = 0; attempt < 3; attempt++) {
    const ip = freshIp();
    const responses: Response[] = [];
    for (let i = 0; i < count; i++) responses.push(await send(ip, body));
    const resets = new Set(responses.map((r) => r.headers.get("X-RateLimit-Reset")));
    if (resets.size === 1) return responses;
  }
  throw new Error("the rate-limit window rolled over in three bursts in a row");
}

async function expectLimitedAfter(responses: Response[], limit: number): Promise<void> {
  const nowSeconds = Math.floor(Date.now() / 1000);
  responses.slice(0, limit).forEach((response, index) => {
    expect(response.status).not.toBe(429);
    expect(response.headers.get("X-RateLimit-Limit")).toBe(String(limit));
    expect(response.headers.get("X-RateLimit-Remaining")).toBe(String(limit - index - 1));
    expect(response.headers.get("Retry-After")).toBeNull();
  });
  const refused = responses[limit]!;
  expect(refused.status).toBe(429);
  const reset = Number(refused.headers.get("X-RateLimit-Reset"));
  expect(reset).toBeGreaterThan(nowSeconds - 1);
  expect(reset).toBeLessThanOrEqual(nowSeconds + 61);
  const retryAfter = Number(refused.headers.get("Retry-After"));
  expect(retryAfter).toBeGreaterThanOrEqual(1);
  expect(retryAfter).toBeLessThanOrEqual(60);
  expect(refused.headers.get("X-RateLimit-Remaining")).toBe("0");
  expect(refused.headers.get("X-Request-ID")).toMatch(/^req_/);
  expect(await refused.json()).toEqual({
    error: {
      status: 429,
      code: "rate_limited",
      message: `Too many requests. Retry after ${retryAfter} seconds.`,
      retry_after_seconds: retryAfter,
    },
  });
}

describe("rate limit, in-memory limiter", () => {
  it("allows 60 clicks per minute per IP, then answers 429 and records nothing", async () => {
    const p = await createProgram();
    const body = { affiliate_url: `https://shop.example/?aff=${p.links[0]}` };
    const responses = await burst(throughSelf, body, 61);
    await expectLimitedAfter(responses, 60);
    expect(responses.slice(0, 60).every((r) => r.status === 200)).toBe(true);
    expect(await clicksOfProgram(p.programId)).toHaveLength(60);
  });

  it("counts each IP separately", async () => {
    const [a, b] = [freshIp(), freshIp()];
    const first = await throughSelf(a, {});
    const other = await throughSelf(b, {});
    expect(first.headers.get("X-RateLimit-Remaining")).toBe("59");
    expect(other.headers.get("X-RateLimit-Remaining")).toBe("59");
  });
});

const upstash = inject("upstash");

// Runs when REDIS_URL is set (CI sets it): the Upstash client against the real Redis, through the local
// REST endpoint. Without REDIS_URL there is no Redis to test against, and the suite says so by its name.
describe.runIf(upstash)("rate limit, Upstash limiter against the real Redis (needs REDIS_URL)", () => {
  const upstashEnv = {
    ...env,
    UPSTASH_REDIS_REST_URL: upstash?.url,
    UPSTASH_REDIS_REST_TOKEN: upstash?.token,
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

  it("allows 60 per minute per IP with shared counts, then answers 429", async () => {
    const responses = await burst(throughUpstash, {}, 61);
    await expectLimitedAfter(responses, 60);
  });

  it("costs at most one Redis round trip per request once warm", async () => {
    const ip = freshIp();
    await throughUpstash(ip, {});
    const realFetch = globalThis.fetch;
    let redisCalls = 0;
    globalThis.fetch = (input, init) => {
      const url = input instanceof Request ? input.url : String(input);
      if (upstash && url.startsWith(upstash.url)) redisCalls++;
      return realFetch(input, init);
    };
    try {
      await throughUpstash(ip, {});
    } finally {
      globalThis.fetch = realFetch;
    }
    expect(redisCalls).toBe(1);
  });
});
