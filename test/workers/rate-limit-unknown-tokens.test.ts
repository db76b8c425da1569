import { SELF } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { unknownTokensPerAddressFactor } from "../../lib/ratelimit/count-request.ts";
import { rateLimits } from "../../lib/ratelimit/policies.ts";
import { BASE, call } from "./dashboard-sign-in.ts";
import { programOf, signInPerson } from "./dashboard-tracking-helpers.ts";
import { freshIp } from "./harness.ts";

/**
 * Through the routes (the counting itself: test/node/count-request.test.ts). Tokens that did not authenticate
 * count in their address's bucket of unknown tokens, ten times the route's limit; the
 * routes that take no credential count per IP whatever Bearer is sent; the dashboard page counts its
 * cookie only. Each case runs within one rate-limit window or is retried.
 */
async function inOneWindow<T extends { headers: Headers }[]>(run: () => Promise<T>): Promise<T> {
  for (let attempt = 0; attempt < 3; attempt++) {
    const answers = await run();
    if (new Set(answers.map((a) => a.headers.get("X-RateLimit-Reset"))).size === 1) return answers;
  }
  throw new Error("the rate-limit window rolled over in three runs in a row");
}

describe("the address's bucket of unknown tokens, through a route", () => {
  it("refuses an address past ten times the limit of made-up tokens with the typed 429, and lets a known token through", async () => {
    const person = await signInPerson();
    const program = await programOf(person);
    const cap = rateLimits.trackingWrite.limit * unknownTokensPerAddressFactor;
    const body = { program_id: program.programId, event_type: "click" };
    // The person's token is known to the isolate once it has authenticated.
    const first = await call("POST", "/api/tracking/test", { token: person.token, body });
    expect(first.status).toBe(200);
    const answers = await inOneWindow(async () => {
      const ip = freshIp();
      const headers = { "CF-Connecting-IP": ip };
      const sent = [];
      for (let i = 0; i <= cap; i++) {
        sent.push(
          await call("POST", "/api/tracking/test", {
            token: `dst_madeup${crypto.randomUUID()}`,
            body,
            headers,
          }),
        );
      }
      sent.push(await call("POST", "/api/tracking/test", { token: person.token, body, headers }));
      return sent;
    });
    expect(answers.slice(0, cap).every((a) => a.status === 401)).toBe(true);
    const refused = answers[cap]!;
    expect(refused.status).toBe(429);
    const wait = refused.body.error.retry_after_seconds;
    expect(refused.body).toEqual({
      error: {
        status: 429,
        code: "rate_limited",
        message: `Too many requests. Retry after ${wait} ${wait === 1 ? "second" : "seconds"}.`,
        retry_after_seconds: wait,
      },
    });
    expect(refused.headers.get("X-RateLimit-Limit")).toBe(String(cap));
    expect(refused.headers.get("X-RateLimit-Remaining")).toBe("0");
    expect(Number(refused.headers.get("Retry-After"))).toBeGreaterThanOrEqual(1);
    const known = answers[cap + 1]!;
    expect(known.status).toBe(200);
    expect(known.headers.get("X-RateLimit-Limit")).toBe(String(rateLimits.trackingWrite.limit));
  });
});

describe("real tokens and the address's bucket of unknown tokens", () => {
  it("leaves it to the tokens that do not authenticate: real tokens' first requests from the address use none of it", async () => {
    const cap = rateLimits.trackingWrite.limit * unknownTokensPerAddressFactor;
    const answers = await inOneWindow(async () => {
      // Signed in afresh on every run, so each token's request below is its first in the isolate.
      const people = [await signInPerson(), await signInPerson(), await signInPerson()];
      const programs = await Promise.all(people.map((person) => programOf(person)));
      const headers = { "CF-Connecting-IP": freshIp() };
      const madeUp = () =>
        call("POST", "/api/tracking/test", {
          token: `dst_madeup${crypto.randomUUID()}`,
          body: { program_id: programs[0]!.programId, event_type: "click" },
          headers,
        });
      const sent = [];
      for (let i = 0; i < cap - 1; i++) sent.push(await madeUp());
      for (const [i, person] of people.entries()) {
        const body = { program_id: programs[i]!.programId, event_type: "click" };
        sent.push(await call("POST", "/api/tracking/test", { token: person.token, body, headers }));
      }
      sent.push(await madeUp(), await madeUp());
      return sent;
    });
    expect(answers.slice(0, cap - 1).every((a) => a.status === 401)).toBe(true);
    expect(answers.slice(cap - 1, cap + 2).map((a) => a.status)).toEqual([200, 200, 200]);
    // The last made-up token the address may send, then the first refused.
    expect(answers.slice(cap + 2).map((a) => a.status)).toEqual([401, 429]);
    // Two hundred requests one after another, up to three runs should the window roll over: on a slow machine
    // well beyond the default 30 s.
  }, 180_000);
});

describe("routes without a credential", () => {
  it("count the command line's login start per IP, whatever Bearer is sent", async () => {
    const answers = await inOneWindow(async () => {
      const headers = { "CF-Connecting-IP": freshIp() };
      const sent = [];
      for (let i = 0; i <= 60; i++) {
        sent.push(
          await call("POST", "/api/v1/cli/auth/start", {
            token: `atl_madeup${crypto.randomUUID()}`,
            headers,
          }),
        );
      }
      return sent;
    });
    expect(answers.map((a) => a.headers.get("X-RateLimit-Remaining")).slice(0, 3)).toEqual([
      "59",
      "58",
      "57",
    ]);
    expect(answers[59]!.status).toBe(200);
    expect(answers[60]!.status).toBe(429);
  });
});

describe("the dashboard page", () => {
  it("counts its session cookie, not a Bearer header sent beside it", async () => {
    const person = await signInPerson();
    const page = () =>
      SELF.fetch(`${BASE}/dashboard`, {
        headers: {
          "CF-Connecting-IP": freshIp(),
          Cookie: `__Host-affiliate_session=${person.token}`,
          Authorization: `Bearer dst_madeup${crypto.randomUUID()}`,
        },
        redirect: "manual",
      });
    const answers = await inOneWindow(async () => [await page(), await page(), await page()]);
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200]);
    const remaining = answers.map((a) => Number(a.headers.get("X-RateLimit-Remaining")));
    expect(remaining[1]).toBe(remaining[0]! - 1);
    expect(remaining[2]).toBe(remaining[0]! - 2);
  });
});
