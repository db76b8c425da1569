import { describe, expect, it } from "vitest";
import { clicksOfProgram, createProgram, freshIp } from "./harness.ts";
import { burst, expectLimitedAfter, throughSelf } from "./rate-limit-helpers.ts";

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
