import { describe, expect, it } from "vitest";
import { faultCases, withFault } from "./fault-cases.ts";
import { useFaultSwitch } from "./fault-switch.ts";
import { clicksOfProgram, createProgram, postJson } from "./harness.ts";
import { getJson, readinessPath } from "./readiness-helpers.ts";

/**
 * The two 500s of spec section 7 the other fault files do not reach: the click's platform 500
 * (`Click tracking failed`, no `error.code`) and readiness's typed 500 (`internal_error`,
 * `Failed to compute readiness. Retry shortly.`, `retry_after_seconds` 10). Both carry the request id
 * only in the `X-Request-ID` header, never in the body, and a retry once the database answers again
 * gets the route's ordinary answer.
 */
const faults = useFaultSwitch();

/** Each request makes one database round trip when it succeeds (the click's one statement, readiness's one read). */
const ROUND_TRIPS = { click: 1, readiness: 1 } as const;

const clickPath = "/api/v1/track/click";

function expectRequestIdOnlyInHeader(response: { body: Record<string, unknown>; headers: Headers }) {
  const requestId = response.headers.get("X-Request-ID");
  expect(requestId).toBeTruthy();
  expect(JSON.stringify(response.body)).not.toContain(requestId!);
}

describe("injected faults: the round trips of click and readiness when nothing fails", () => {
  it("click and readiness make their budgeted round trips (the ordinals the cases iterate)", async () => {
    const p = await createProgram();
    const url = `https://shop.example/?aff=${p.links[0]}`;
    expect(await faults.roundTripsOf(() => postJson(clickPath, { affiliate_url: url }))).toBe(
      ROUND_TRIPS.click,
    );
    expect(
      await faults.roundTripsOf(() => getJson(readinessPath, { Authorization: `Bearer ${p.apiKey}` })),
    ).toBe(ROUND_TRIPS.readiness);
  });
});

describe("injected faults: POST /api/v1/track/click", () => {
  it.each(faultCases(ROUND_TRIPS.click))("%s at round trip %i", async (name, ordinal, fault) => {
    const p = await createProgram();
    const body = { affiliate_url: `https://shop.example/?aff=${p.links[0]}` };
    const response = await withFault(faults, fault, ordinal, () => postJson(clickPath, body));

    expect(response.status).toBe(500);
    expect(response.body).toEqual({
      data: null,
      error: {
        status: 500,
        name: "InternalServerError",
        message: "Click tracking failed",
        details: {},
      },
    });
    expectRequestIdOnlyInHeader(response);
    // A lost answer is the one case where the click's statement committed before the failure.
    expect(await clicksOfProgram(p.programId)).toHaveLength(name === "lost answer" ? 1 : 0);

    const retry = await postJson(clickPath, body);
    expect(retry.status).toBe(200);
    expect(retry.body).toMatchObject({ success: true, cookie_window_days: p.attributionWindowDays });
  });
});

describe("injected faults: GET /api/v1/programs/me/readiness", () => {
  it.each(faultCases(ROUND_TRIPS.readiness))("%s at round trip %i", async (_name, ordinal, fault) => {
    const p = await createProgram();
    const auth = { Authorization: `Bearer ${p.apiKey}` };
    const response = await withFault(faults, fault, ordinal, () => getJson(readinessPath, auth));

    expect(response.status).toBe(500);
    expect(response.body).toEqual({
      error: {
        code: "internal_error",
        message: "Failed to compute readiness. Retry shortly.",
        retry_after_seconds: 10,
      },
    });
    expectRequestIdOnlyInHeader(response);
    expect(response.headers.get("Retry-After")).toBeNull();

    const retry = await getJson(readinessPath, auth);
    expect(retry.status).toBe(200);
    expect(retry.body).toMatchObject({ program_id: p.programId });
    expect(retry.body).not.toHaveProperty("success");
  });
});
