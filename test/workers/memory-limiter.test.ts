import { describe, expect, it } from "vitest";
import { KnownKeys } from "../../lib/ratelimit/known-keys.ts";
import { MemoryRateLimiter } from "../../lib/ratelimit/memory-limiter.ts";
import type { RateLimitPolicy } from "../../lib/ratelimit/types.ts";

const policy: RateLimitPolicy = { name: "test", limit: 2, windowSeconds: 60, countedPer: "ip" };

function movableClock(start: string) {
  let now = new Date(start).getTime();
  return { now: () => new Date(now), advance: (ms: number) => (now += ms) };
}

describe("in-memory limiter bounds", () => {
  it("never holds more buckets than its cap, whatever the number of callers", async () => {
    const limiter = new MemoryRateLimiter(movableClock("2026-01-01T00:00:10Z"), { maxBuckets: 100 });
    for (let i = 0; i < 1_000; i++) {
      await limiter.check(policy, `ip:${i}`);
      expect(limiter.size).toBeLessThanOrEqual(100);
    }
    expect(limiter.size).toBeGreaterThan(90);
  });

  it("when full of live buckets, drops the least recently used sixteenth of them at once", async () => {
    const limiter = new MemoryRateLimiter(movableClock("2026-01-01T00:00:10Z"), { maxBuckets: 32 });
    for (let i = 0; i < 32; i++) await limiter.check(policy, `ip:${i}`);
    // ip:0 used again: ip:1 and ip:2 are now the least recently used.
    await limiter.check(policy, "ip:0");
    await limiter.check(policy, "ip:new");
    expect(limiter.size).toBe(31);
    expect((await limiter.check(policy, "ip:0")).remaining).toBe(0);
    expect((await limiter.check(policy, "ip:3")).remaining).toBe(0);
    expect((await limiter.check(policy, "ip:1")).remaining).toBe(1);
  });

  it("drops expired windows first, then the least recently used live bucket", async () => {
    const clock = movableClock("2026-01-01T00:00:10Z");
    const limiter = new MemoryRateLimiter(clock, { maxBuckets: 3 });
    await limiter.check(policy, "old");
    clock.advance(60_000);
    await limiter.check(policy, "a");
    await limiter.check(policy, "b");
    // Full: the expired "old" window goes, the live ones stay.
    await limiter.check(policy, "c");
    expect(limiter.size).toBe(3);
    expect((await limiter.check(policy, "a")).remaining).toBe(0);
    // Full of live buckets: "b" is the least recently used and is dropped (it starts over).
    await limiter.check(policy, "d");
    expect(limiter.size).toBe(3);
    expect((await limiter.check(policy, "c")).remaining).toBe(0);
    expect((await limiter.check(policy, "b")).remaining).toBe(1);
  });

  it("still refuses over the limit within a window", async () => {
    const limiter = new MemoryRateLimiter(movableClock("2026-01-01T00:00:10Z"));
    const results = [];
    for (let i = 0; i < 3; i++) results.push(await limiter.check(policy, "ip:1"));
    expect(results.map((r) => r.allowed)).toEqual([true, true, false]);
  });
});

describe("known keys", () => {
  it("keeps at most its capacity, forgetting the least recently authenticated", () => {
    const keys = new KnownKeys(2);
    keys.remember("a");
    keys.remember("b");
    keys.remember("a");
    keys.remember("c");
    expect(keys.size).toBe(2);
    expect([keys.has("a"), keys.has("b"), keys.has("c")]).toEqual([true, false, true]);
  });
});

describe("peek", () => {
  it("shows the bucket as it stands without counting a call", async () => {
    const limiter = new MemoryRateLimiter(movableClock("2026-01-01T00:00:10Z"));
    const fresh = {
      allowed: true,
      limit: 2,
      remaining: 2,
      resetAt: Date.parse("2026-01-01T00:01:00Z") / 1000,
    };
    expect(await limiter.peek(policy, "ip:1")).toEqual(fresh);
    expect(await limiter.peek(policy, "ip:1")).toEqual(fresh);
    expect(limiter.size).toBe(0);
    await limiter.check(policy, "ip:1");
    expect(await limiter.peek(policy, "ip:1")).toMatchObject({ allowed: true, remaining: 1 });
    await limiter.check(policy, "ip:1");
    expect(await limiter.peek(policy, "ip:1")).toMatchObject({ allowed: false, remaining: 0 });
    // Peeking counted nothing: the third call is the first refused.
    expect((await limiter.check(policy, "ip:1")).allowed).toBe(false);
  });
});

describe("release", () => {
  it("takes back one counted call in its window, never below zero, and nothing once the window ended", async () => {
    const clock = movableClock("2026-01-01T00:00:10Z");
    const limiter = new MemoryRateLimiter(clock);
    const first = await limiter.check(policy, "ip:1");
    await limiter.check(policy, "ip:1");
    await limiter.release(policy, "ip:1", first);
    expect(await limiter.peek(policy, "ip:1")).toMatchObject({ allowed: true, remaining: 1 });
    await limiter.release(policy, "ip:1", first);
    await limiter.release(policy, "ip:1", first);
    expect(await limiter.peek(policy, "ip:1")).toMatchObject({ remaining: 2 });
    // A call counted in the last window is not taken back from this one.
    const late = await limiter.check(policy, "ip:1");
    clock.advance(60_000);
    await limiter.check(policy, "ip:1");
    await limiter.release(policy, "ip:1", late);
    expect(await limiter.peek(policy, "ip:1")).toMatchObject({ remaining: 1 });
  });
});
