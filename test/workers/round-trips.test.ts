import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { neonConfig } from "../../lib/db/sql-over-http.ts";
import { createProgram, type ProgramFixture, postJson } from "./harness.ts";
import { bearer, leadPath, recordClick } from "./lead-helpers.ts";

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

  it("lead: 1 when the database decides it (or refuses it), 2 (1 read + 1 write) left to the rules, 0 for an invalid keyless body", async () => {
    const lead = await createProgram();
    const clickId = await recordClick(lead.links[0]);
    const cases: Array<[string, () => Promise<Awaited<ReturnType<typeof postJson>>>, number, number]> = [
      ["provisional", () => postJson(leadPath, { click_id: clickId, customer_key: "rt-1" }), 200, 1],
      [
        "settled",
        () => postJson(leadPath, { click_id: clickId, customer_key: "rt-1" }, bearer(lead.apiKey)),
        200,
        1,
      ],
      ["status refusal", () => postJson(leadPath, { click_id: clickId }, bearer(lead.apiKey)), 400, 1],
      [
        "test lead",
        () => postJson(leadPath, { additional_data: { test_mode: true } }, bearer(lead.apiKey)),
        200,
        2,
      ],
      ["unknown key", () => postJson(leadPath, { click_id: clickId }, bearer("sk_live_nope")), 401, 1],
      ["rule 1", () => postJson(leadPath, {}), 400, 0],
      ["invalid body", () => postJson(leadPath, { click_id: 5 }), 400, 0],
      // With a Bearer key the key is checked alone first: a bad key's 401 is not hidden by the body's 400.
      ["invalid body, keyed", () => postJson(leadPath, { click_id: 5 }, bearer(lead.apiKey)), 400, 1],
    ];
    for (const [name, send, status, expected] of cases) {
      let response: Awaited<ReturnType<typeof postJson>> | undefined;
      const trips = await roundTripsOf(async () => {
        response = await send();
      });
      expect({ name, status: response?.status, trips }).toEqual({ name, status, trips: expected });
    }
  });
});
