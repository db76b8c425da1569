import { SELF } from "cloudflare:test";
import { beforeAll, describe, expect, it } from "vitest";
import { createProgram, freshIp, type ProgramFixture } from "./harness.ts";
import { burst, expectLimitedAfter } from "./rate-limit-helpers.ts";
import { countDatabaseRoundTrips } from "./round-trip-counter.ts";

const roundTripsOf = countDatabaseRoundTrips();

async function getConfig(query: string, headers: Record<string, string> = {}) {
  const response = await SELF.fetch(`https://api.test/api/v1/track/config${query}`, {
    headers: { "CF-Connecting-IP": freshIp(), ...headers },
  });
  return { status: response.status, body: (await response.json()) as unknown, headers: response.headers };
}

const platform = (message: string) => ({
  data: null,
  error: { status: 400, name: "BadRequestError", message, details: {} },
});

describe("GET /api/v1/track/config errors", () => {
  const cases: Array<{ query: string; message: string }> = [
    { query: "", message: "program_id is required" },
    { query: "?program_id=", message: "program_id is required" },
    { query: "?program=1", message: "program_id is required" },
    { query: "?program_id=abc", message: "program_id must be a positive integer" },
    { query: "?program_id=0", message: "program_id must be a positive integer" },
    { query: "?program_id=-3", message: "program_id must be a positive integer" },
    { query: "?program_id=1.5", message: "program_id must be a positive integer" },
    { query: "?program_id=12345678901", message: "program_id must be a positive integer" },
    { query: "?program_id=2000000000", message: "Unknown program_id" },
    { query: "?program_id=9999999999", message: "Unknown program_id" },
  ];

  it.each(cases)("'$query' -> 400 $message", async ({ query, message }) => {
    const response = await getConfig(query, { Origin: "https://anywhere.example" });
    expect(response.status).toBe(400);
    expect(response.body).toEqual(platform(message));
    expect(response.headers.get("X-Request-ID")).toMatch(/^req_/);
    expect(response.headers.get("X-RateLimit-Limit")).toBe("60");
    // Any page may read why it failed.
    expect(response.headers.get("Access-Control-Allow-Origin")).toBe("*");
  });
});

describe("GET /api/v1/track/config", () => {
  let strict: ProgramFixture;
  let open: ProgramFixture;
  beforeAll(async () => {
    [strict, open] = await Promise.all([
      createProgram({ attributionWindowDays: 30 }),
      createProgram({ leadAuthPolicy: "browser_allowed", attributionWindowDays: 90 }),
    ]);
  });

  it("answers the program's settings, judged for the page's origin", async () => {
    const response = await getConfig(`?program_id=${strict.programId}`, { Origin: strict.origin });
    expect(response.status).toBe(200);
    expect(response.body).toEqual({
      success: true,
      program_id: strict.programId,
      cookie_window_days: 30,
      lead_capture_mode: "server_required",
      origin_allowed: true,
    });
    expect(response.headers.get("Access-Control-Allow-Origin")).toBe("*");
    expect(response.headers.get("Vary")).toContain("Origin");
    expect(response.headers.get("X-RateLimit-Limit")).toBe("60");
    expect(response.headers.get("X-RateLimit-Remaining")).toBe("59");
  });

  it("tells another origin it is not allowed, and a call without Origin too", async () => {
    const foreign = await getConfig(`?program_id=${open.programId}`, { Origin: strict.origin });
    expect(foreign.body).toEqual({
      success: true,
      program_id: open.programId,
      cookie_window_days: 90,
      lead_capture_mode: "browser_allowed",
      origin_allowed: false,
    });
    const twin = await getConfig(`?program_id=${open.programId}`, {
      Origin: open.origin.replace("https://", "http://"),
    });
    expect((twin.body as { origin_allowed: boolean }).origin_allowed).toBe(false);
    const server = await getConfig(`?program_id=${open.programId}`);
    expect((server.body as { origin_allowed: boolean }).origin_allowed).toBe(false);
  });

  it("answers a preflight for any origin", async () => {
    const response = await SELF.fetch(`https://api.test/api/v1/track/config?program_id=${open.programId}`, {
      method: "OPTIONS",
      headers: { Origin: "https://anywhere.example", "Access-Control-Request-Method": "GET" },
    });
    expect(response.status).toBe(204);
    expect(response.headers.get("Access-Control-Allow-Origin")).toBe("*");
    expect(response.headers.get("Access-Control-Allow-Methods")).toContain("GET");
  });

  it("costs one database round trip, and none for a malformed program_id", async () => {
    expect(await roundTripsOf(() => getConfig(`?program_id=${open.programId}`))).toBe(1);
    expect(await roundTripsOf(() => getConfig("?program_id=2000000000"))).toBe(1);
    expect(await roundTripsOf(() => getConfig("?program_id=x"))).toBe(0);
  });

  it("allows 60 per minute per IP, then answers 429", async () => {
    const send = (ip: string) =>
      SELF.fetch(`https://api.test/api/v1/track/config?program_id=${open.programId}`, {
        headers: { "CF-Connecting-IP": ip },
      });
    const responses = await burst(send, undefined, 61);
    expect(responses[0]?.status).toBe(200);
    await expectLimitedAfter(responses, 60);
    expect(responses[60]?.headers.get("Access-Control-Allow-Origin")).toBe("*");
  });
});
