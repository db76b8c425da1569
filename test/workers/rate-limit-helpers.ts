import { SELF } from "cloudflare:test";
import { expect } from "vitest";
import { freshIp } from "./harness.ts";

export const clickUrl = "https://api.test/api/v1/track/click";

export type Send = (ip: string, body: unknown) => Promise<Response>;

export const throughSelf: Send = (ip, body) =>
  SELF.fetch(clickUrl, {
    method: "POST",
    headers: { "Content-Type": "application/json", "CF-Connecting-IP": ip },
    body: JSON.stringify(body),
  });

/**
 * Sends limit+1 requests from one IP. A fixed window can roll over mid-burst; then the burst is retried,
 * so the assertions always see one whole window.
 */
export async function burst(send: Send, body: unknown, count: number): Promise<Response[]> {
  for (let attempt = 0; attempt < 3; attempt++) {
    const ip = freshIp();
    const responses: Response[] = [];
    for (let i = 0; i < count; i++) responses.push(await send(ip, body));
    const resets = new Set(responses.map((r) => r.headers.get("X-RateLimit-Reset")));
    if (resets.size === 1) return responses;
  }
  throw new Error("the rate-limit window rolled over in three bursts in a row");
}

export async function expectLimitedAfter(responses: Response[], limit: number): Promise<void> {
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
