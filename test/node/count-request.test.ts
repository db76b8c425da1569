import { describe, expect, it } from "vitest";
import { fixedClock } from "../../lib/clock.ts";
import {
  countRequest,
  settleToken,
  unknownTokensPerAddressFactor,
} from "../../lib/ratelimit/count-request.ts";
import { KnownKeys } from "../../lib/ratelimit/known-keys.ts";
import { MemoryRateLimiter } from "../../lib/ratelimit/memory-limiter.ts";
import { rateLimits } from "../../lib/ratelimit/policies.ts";
import type { RateLimitResult } from "../../lib/ratelimit/types.ts";

/**
 * Which bucket a request counts in and shows (spec section 8: per Bearer token, falling back to IP), with
 * the limiter the local stack and the tests run; all within one fixed window (the clock does not move).
 */
const policy = rateLimits.saleAndRefund;
const perAddress = policy.limit * unknownTokensPerAddressFactor;

/**
 * `count` runs a request as the middleware does: counted before, then, when it was let through with a token,
 * settled as the route found the token (`realTokens`: the tokens that authenticate).
 */
function setUp(realTokens: readonly string[] = []) {
  const limiter = new MemoryRateLimiter(fixedClock("2026-11-30T06:00:10Z"), { maxBuckets: 100_000 });
  const known = new KnownKeys();
  const count = async (token: string | null, ip = "203.0.113.1") => {
    const counted = await countRequest(limiter, policy, token, ip, known);
    if (token && counted.shown.allowed) {
      await settleToken(limiter, policy, token, ip, known, counted, realTokens.includes(token));
    }
    return counted.shown;
  };
  /** Counted, not yet settled: a request still in flight. */
  const inFlight = (token: string, ip = "203.0.113.1") => countRequest(limiter, policy, token, ip, known);
  return { known, count, inFlight };
}

// Hashes as the limiter receives them (hex, 64 characters), distinct in the 32 it keeps.
const madeUp = (i: number) => `${String(i + 1).padStart(32, "0")}${"f".repeat(32)}`;
const figures = (r: RateLimitResult) => [r.allowed, r.limit, r.remaining];

describe("countRequest", () => {
  it("counts a request without a token in its IP bucket: 120, then refused", async () => {
    const { count } = setUp();
    const answers = [];
    for (let i = 0; i <= policy.limit; i++) answers.push(await count(null));
    expect(figures(answers[0]!)).toEqual([true, 120, 119]);
    expect(figures(answers[119]!)).toEqual([true, 120, 0]);
    expect(figures(answers[120]!)).toEqual([false, 120, 0]);
  });

  it("shows each made-up token its own bucket, and refuses an address past ten times the limit of them", async () => {
    const { count } = setUp();
    const answers = [];
    for (let i = 0; i <= perAddress; i++) answers.push(await count(madeUp(i)));
    expect(
      answers.slice(0, perAddress).every((r) => r.allowed && r.limit === 120 && r.remaining === 119),
    ).toBe(true);
    expect(figures(answers[perAddress]!)).toEqual([false, perAddress, 0]);
    // Another address, and a request without a token from the same one, are counted apart.
    expect(figures(await count(madeUp(-1), "203.0.113.2"))).toEqual([true, 120, 119]);
    expect(figures(await count(null))).toEqual([true, 120, 119]);
  });

  it("lets a new real key's first request through after its address sent more than the limit of made-up tokens", async () => {
    const { count } = setUp();
    for (let i = 0; i <= policy.limit; i++) await count(madeUp(i));
    expect(figures(await count("a".repeat(64)))).toEqual([true, 120, 119]);
  });

  it("lets every real key's first request through, however many one address sends for, and remembers them", async () => {
    const keys = Array.from({ length: perAddress + 1 }, (_, i) => madeUp(100_000 + i));
    const { known, count } = setUp(keys);
    const answers = [];
    for (const key of keys) answers.push(await count(key));
    expect(answers.every((r) => r.allowed && r.limit === 120 && r.remaining === 119)).toBe(true);
    expect(keys.every((key) => known.has(key))).toBe(true);
    // They used none of the address's allowance for tokens that do not authenticate.
    for (let i = 0; i < perAddress; i++) expect((await count(madeUp(i))).allowed).toBe(true);
    expect((await count(madeUp(perAddress))).allowed).toBe(false);
  });

  it("refuses made-up tokens past the address's cap while they are all in flight at once", async () => {
    const { inFlight } = setUp();
    const answers = await Promise.all(
      Array.from({ length: perAddress + 5 }, (_, i) => inFlight(madeUp(i)).then((c) => c.shown.allowed)),
    );
    expect(answers.filter((allowed) => allowed)).toHaveLength(perAddress);
  });

  it("counts a known key in its own bucket only, even from an address refused for made-up tokens", async () => {
    const { known, count } = setUp();
    const key = "b".repeat(64);
    known.remember(key);
    for (let i = 0; i <= perAddress; i++) await count(madeUp(i));
    expect((await count(madeUp(-2))).allowed).toBe(false);
    expect(figures(await count(key))).toEqual([true, 120, 119]);
  });

  it("limits one token sent from many addresses as one token", async () => {
    const { count } = setUp();
    const answers = [];
    for (let i = 0; i <= policy.limit; i++) answers.push(await count(madeUp(0), `198.51.100.${i % 250}`));
    expect(figures(answers[119]!)).toEqual([true, 120, 0]);
    expect(figures(answers[120]!)).toEqual([false, 120, 0]);
  });
});
