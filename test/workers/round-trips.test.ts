import { neonConfig } from "@neondatabase/serverless";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createProgram, type ProgramFixture, postJson } from "./harness.ts";

/**
 * Counts the database driver's HTTP round trips (DESIGN.md section 2 budget). The worker runs in this
 * isolate with the same driver module, so wrapping its fetch sees every round trip a request makes.
 */
let roundTrips = 0;
const previousFetch = neonConfig.fetchFunction;
beforeAll(() => {
  neonConfig.fetchFunction = (input: RequestInfo | URL, init?: RequestInit) => {
    roundTrips++;
    return fetch(input, init);
  };
});
afterAll(() => {
  neonConfig.fetchFunction = previousFetch;
});

async function roundTripsOf(action: () => Promise<unknown>): Promise<number> {
  const before = roundTrips;
  await action();
  return roundTrips - before;
}

describe("database round trips per request", () => {
  let p: ProgramFixture;
  beforeAll(async () => {
    p = await createProgram();
  });

  it("click: exactly 1 for a recorded click, a first-click repeat and a refused click", async () => {
    let first: Awaited<ReturnType<typeof postJson>> | undefined;
    expect(
      await roundTripsOf(async () => {
        first = await postJson("/api/v1/track/click", {
          affiliate_url: `https://s.example/?aff=${p.links[0]}`,
        });
      }),
    ).toBe(1);
    expect(first?.status).toBe(200);
    const repeat = () =>
      postJson("/api/v1/track/click", {
        affiliate_url: `https://s.example/?aff=${p.links[1]}`,
        click_id: first?.body.click_id,
      });
    expect(await roundTripsOf(repeat)).toBe(1);
    const disabled = () =>
      postJson("/api/v1/track/click", { affiliate_url: `https://s.example/?aff=${p.disabledLink}` });
    expect(await roundTripsOf(disabled)).toBe(1);
  });

  it("click: 0 when the body is invalid", async () => {
    expect(await roundTripsOf(() => postJson("/api/v1/track/click", { affiliate_url: "nope" }))).toBe(0);
  });
});
