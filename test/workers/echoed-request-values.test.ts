import { describe, expect, it } from "vitest";
import { echoedValue } from "../../lib/errors/echoed-value.ts";
import { cli, createPerson, loginTokenFor } from "./cli-harness.ts";
import { call } from "./dashboard-sign-in.ts";
import { createProgram } from "./harness.ts";
import { ownerWithProgram, platform } from "./program-admin-harness.ts";

/**
 * A refusal that quotes the caller's value (`Invalid event_type: <value>`, `Invalid commission_type: <value>`)
 * must answer 400 whatever JSON the value is. `String()` of a parsed object whose own `toString` or `valueOf`
 * is not a function throws a TypeError, which answered 500 (the API fuzzer's seed -80367694 sent
 * `event_type: {"toString": true, ...}`); an array was quoted as its joined elements, so `["click"]` read as
 * `Invalid event_type: click`.
 */
const hostile: [label: string, value: unknown, quoted: string][] = [
  ["own toString that is not a function", { toString: true }, '{"toString":true}'],
  [
    "own toString and valueOf that are not functions",
    { toString: 1, valueOf: 2 },
    '{"toString":1,"valueOf":2}',
  ],
  ["own __proto__ key", JSON.parse('{"__proto__": {"toString": 1}}'), '{"__proto__":{"toString":1}}'],
  ["a list holding a valid value", ["click"], '["click"]'],
  ["an empty object", {}, "{}"],
  ["null", null, "null"],
  ["a number", 7, "7"],
  ["a boolean", false, "false"],
  ["an unknown string", "refund", "refund"],
];

const eventTypeMessage = (quoted: string) => `Invalid event_type: ${quoted}. Valid: click, lead, sale`;
const commissionTypeMessage = (quoted: string) =>
  `Invalid commission_type: ${quoted}. Valid: percent, fixed, recurring_percent, recurring_fixed`;

describe("refusals that quote the caller's value answer 400 for any JSON value", () => {
  it.each(hostile)("POST /api/v1/cli/test-event, event_type %s", async (_, value, quoted) => {
    const { apiKey } = await createProgram();
    // The lower-case scheme the fuzzer's failing request carried: the scheme is case-insensitive.
    const answer = await cli("POST", "/api/v1/cli/test-event", {
      body: { event_type: value },
      headers: { Authorization: `bearer ${apiKey}` },
    });
    expect(answer.status).toBe(400);
    expect(answer.body).toEqual(platform(400, eventTypeMessage(quoted)));
    expect(answer.headers.get("X-Request-ID")).toMatch(/^req_/);
  });

  // init reads a null commission_type as missing (its own message, covered in cli-errors.test.ts).
  const presentValues = hostile.filter(([, value]) => value !== null);
  it.each(presentValues)("POST /api/v1/cli/init, commission_type %s", async (_, value, quoted) => {
    const token = await loginTokenFor((await createPerson()).userId);
    const answer = await cli("POST", "/api/v1/cli/init", {
      token,
      body: { name: "Shop", domain: "shop.example", commission_type: value, commission_rate: 20 },
    });
    expect(answer.status).toBe(400);
    expect(answer.body).toEqual(platform(400, commissionTypeMessage(quoted)));
  });

  it.each(hostile)("PATCH /api/v1/programs/:id/settings, commission_type %s", async (_, value, quoted) => {
    const owner = await ownerWithProgram();
    const answer = await call("PATCH", `/api/v1/programs/${owner.programId}/settings`, {
      token: owner.token,
      body: { commission_type: value },
    });
    expect(answer.status).toBe(400);
    expect(answer.body).toEqual(platform(400, commissionTypeMessage(quoted)));
  });

  it.each(hostile)("PATCH settings, commission_rules[0].commission_type %s", async (_, value, quoted) => {
    const owner = await ownerWithProgram();
    const answer = await call("PATCH", `/api/v1/programs/${owner.programId}/settings`, {
      token: owner.token,
      body: { commission_rules: [{ product_id: "p", commission_type: value, commission_rate: 5 }] },
    });
    expect(answer.status).toBe(400);
    expect(answer.body).toEqual(platform(400, `commission_rules[0].${commissionTypeMessage(quoted)}`));
  });
});

describe("echoedValue", () => {
  it("quotes a string as it is and anything else as its JSON text", () => {
    expect(echoedValue("refund")).toBe("refund");
    expect(echoedValue(undefined)).toBe("undefined");
    expect(echoedValue({ a: [1, { b: null }] })).toBe('{"a":[1,{"b":null}]}');
  });

  it("cuts a long JSON text to 100 characters and marks the cut", () => {
    const quoted = echoedValue({ long: "x".repeat(500) });
    expect(quoted).toHaveLength(101);
    expect(quoted.startsWith('{"long":"xxx')).toBe(true);
    expect(quoted.endsWith("…")).toBe(true);
  });

  it("never throws: a value JSON cannot write (a cycle, a bigint) is named by its kind", () => {
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    expect(echoedValue(cyclic)).toBe("[object]");
    expect(echoedValue(10n)).toBe("10");
    expect(echoedValue({ n: 10n })).toBe("[object]");
    expect(echoedValue(Object.create(null))).toBe("{}");
  });
});
