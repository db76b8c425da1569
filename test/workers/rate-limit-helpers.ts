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

/** Sends `count` requests from one new IP, one after another. */
export async function fromOneIp(send: Send, body: unknown, count: number): Promise<Response[]> {
  const ip = freshIp();
  const responses: Response[] = [];
  for (let i = 0; i < count; i++) responses.push(await send(ip, body));
  return responses;
}

/**
 * Sends limit+1 requests from one IP. A fixed window can roll over mid-burst; then the burst is retried,
 * so the assertions always see one whole window.
 */
export async function burst(send: Send, body: unknown, count: number): Promise<Response[]> {
  return (await inOneWindow(async () => ({ answers: await fromOneIp(send, body, count) }))).answers;
}

/**
 * Runs `run` (a fresh caller's limit+1 requests, answered with the caller) until every answer falls in one
 * rate-limit window: a fixed window can roll over mid-run, and then it is repeated with a new caller. At
 * most three runs.
 */
export async function inOneWindow<R extends { answers: { headers: Headers }[] }>(
  run: () => Promise<R>,
): Promise<R> {
  for (let attempt = 0; attempt < 3; attempt++) {
    const result = await run();
    if (new Set(result.answers.map((a) => a.headers.get("X-RateLimit-Reset"))).size === 1) return result;
  }
  throw new Error("the rate-limit window rolled over in three runs in a row");
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
      message: `Too many requests. Retry after ${retryAfter} ${retryAfter === 1 ? "second" : "seconds"}.`,
      retry_after_seconds: retryAfter,
    },
  });
}

export const refundUrl = "https://api.test/api/v1/track/refund";

/** Sends a refund of an unknown sale with `token` as Bearer: 404 for a real key, 401 for a made-up one. */
export type SendWithToken = (ip: string, token: string) => Promise<Response>;

export const refundThroughSelf: SendWithToken = (ip, token) =>
  SELF.fetch(refundUrl, {
    method: "POST",
    headers: { "Content-Type": "application/json", "CF-Connecting-IP": ip, Authorization: `Bearer ${token}` },
    body: JSON.stringify({ transaction_id: `txn-${crypto.randomUUID()}` }),
  });

/**
 * Spec section 8 counts sale and refund per key (120 a minute), every token in its own bucket, which its
 * headers show. More than the limit of made-up tokens from one address refuses nothing (their address's
 * bucket of unknown tokens holds ten times the limit, `test/node/count-request.test.ts`), neither a key the
 * isolate knows nor a new key's first request from that address. Retried when the window rolls over
 * mid-scenario, so the assertions always see one window. `knownKey` is made known to the isolate first.
 */
export async function expectMadeUpTokensCountedApart(
  send: SendWithToken,
  knownKey: string,
  newKey: string,
): Promise<void> {
  const warmUp = await send(freshIp(), knownKey);
  expect(warmUp.status).toBe(404);
  for (let attempt = 0; attempt < 3; attempt++) {
    const ip = freshIp();
    const madeUp: Response[] = [];
    for (let i = 0; i < 121; i++) madeUp.push(await send(ip, `sk_live_madeup${crypto.randomUUID()}`));
    const known = await send(ip, knownKey);
    const resets = new Set([...madeUp, known].map((r) => r.headers.get("X-RateLimit-Reset")));
    if (resets.size !== 1) continue;
    expect(madeUp.map((r) => r.status)).toEqual(Array(121).fill(401));
    expect(madeUp.map((r) => r.headers.get("X-RateLimit-Remaining"))).toEqual(Array(121).fill("119"));
    // The known key counts in its own bucket: only this test's few requests with it have used it.
    expect(known.status).toBe(404);
    expect(Number(known.headers.get("X-RateLimit-Remaining"))).toBeGreaterThanOrEqual(116);
    // A new key's first request from that address is not refused for the made-up tokens before it.
    const first = await send(ip, newKey);
    expect(first.status).toBe(404);
    expect(first.headers.get("X-RateLimit-Remaining")).toBe("119");
    return;
  }
  throw new Error("the rate-limit window rolled over in three attempts in a row");
}

/**
 * Spec section 8 counts sale and refund per key, whatever address a request comes from. Sends 121 requests
 * with one token, each from a new IP, and expects exactly `accepted` answers with `acceptedStatus`, then
 * 429: a real key's first request in the isolate counts in its own bucket, and one made-up token is limited
 * as one token however many addresses send it. `token()` gives a fresh token per attempt, so a window
 * rolling over mid-run is retried with a token no earlier attempt counted.
 */
export async function expectOneBucketPerToken(
  send: SendWithToken,
  token: () => Promise<string>,
  acceptedStatus: number,
): Promise<void> {
  for (let attempt = 0; attempt < 3; attempt++) {
    const value = await token();
    const responses: Response[] = [];
    for (let i = 0; i < 121; i++) responses.push(await send(freshIp(), value));
    if (new Set(responses.map((r) => r.headers.get("X-RateLimit-Reset"))).size !== 1) continue;
    expect(responses.slice(0, 120).map((r) => r.status)).toEqual(Array(120).fill(acceptedStatus));
    expect(responses[119]!.headers.get("X-RateLimit-Remaining")).toBe("0");
    expect(responses[120]!.status).toBe(429);
    return;
  }
  throw new Error("the rate-limit window rolled over in three attempts in a row");
}
