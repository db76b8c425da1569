import { describe, expect, it } from "vitest";
import type { BearerHeader } from "../../lib/auth/bearer.ts";
import { ApiError } from "../../lib/errors/api-error.ts";
import {
  decideLead,
  type LeadDecision,
  type LeadFacts,
  type LeadIntent,
  precheckLead,
} from "../../lib/tracking/lead/decide-lead.ts";
import { leadRefusalError } from "../../lib/tracking/lead/lead-outcome-http.ts";

/** Pure rules: no database, no worker. */
const now = new Date("2026-03-01T12:00:00.000Z");
const clickedAt = new Date("2026-02-20T08:00:00.000Z");
const docsUrl = "https://docs.example/rotation";
const token: BearerHeader = { kind: "token", token: "sk_live_x" };

function intent(overrides: Partial<LeadIntent> = {}): LeadIntent {
  return {
    header: { kind: "absent" },
    clickId: "clk_1",
    customerKey: null,
    email: null,
    requestedProgramId: null,
    eventProgramId: null,
    testMode: false,
    eventName: null,
    now,
    ...overrides,
  };
}

function facts(overrides: Partial<LeadFacts> = {}): LeadFacts {
  return {
    apiKey: null,
    click: { clickId: "clk_1", programId: 1, partnerId: 11, clickedAt, isTest: false },
    programs: [
      { id: 1, leadAuthPolicy: "server_required", allowedOrigins: ["https://one.example"] },
      { id: 2, leadAuthPolicy: "browser_allowed", allowedOrigins: ["https://two.example"] },
    ],
    customerByClick: null,
    customerByKey: null,
    ...overrides,
  };
}

const key = (programId: number, extra: Partial<NonNullable<LeadFacts["apiKey"]>> = {}) => ({
  programId,
  isTest: false,
  rotationMarkedAt: null,
  rotateBy: null,
  ...extra,
});

function refusal(decision: LeadDecision) {
  expect(decision.outcome).toBe("refused");
  if (decision.outcome !== "refused") throw new Error("not refused");
  const error = leadRefusalError(decision.refusal, docsUrl);
  expect(error).toBeInstanceOf(ApiError);
  return { status: error.status, message: error.message, init: error.init };
}

describe("precheckLead (no database)", () => {
  it.each([
    [
      { header: { kind: "malformed" } as BearerHeader },
      401,
      "Missing or malformed Authorization header. Expected: Bearer <token>",
    ],
    [{ clickId: null }, 400, "click_id or customer_key is required"],
    [{ clickId: null, customerKey: "u" }, 400, "click_id is required when no API key is sent"],
    [
      { clickId: null, customerKey: "u", testMode: true },
      400,
      "click_id is required when no API key is sent",
    ],
    [
      { header: { kind: "empty" } as BearerHeader, clickId: null, customerKey: "u" },
      400,
      "click_id is required when no API key is sent",
    ],
  ])("%o -> %i %s", (overrides, status, message) => {
    const refusal = precheckLead(intent(overrides));
    const error = refusal && leadRefusalError(refusal, docsUrl);
    expect(error?.status).toBe(status);
    expect(error?.message).toBe(message);
  });

  it("lets a token through: the key decides (a test key makes click_id optional)", () => {
    expect(precheckLead(intent({ header: token, clickId: null }))).toBeNull();
    expect(precheckLead(intent({ clickId: null, testMode: true }))).toBeNull();
  });
});

describe("decideLead: keys", () => {
  it("refuses an unknown token and a retired key", () => {
    expect(refusal(decideLead(intent({ header: token }), facts()))).toMatchObject({
      status: 401,
      message: "Invalid API token",
    });
    const retired = key(1, { rotateBy: new Date(now.getTime() - 1), rotationMarkedAt: clickedAt });
    expect(refusal(decideLead(intent({ header: token }), facts({ apiKey: retired })))).toMatchObject({
      status: 401,
      init: { envelope: "typed", code: "api_key_rotation_required", fields: { docs_url: docsUrl } },
    });
  });

  it("passes the rotation notice of a key still before its deadline, on success and refusal", () => {
    const rotating = key(1, { rotationMarkedAt: clickedAt, rotateBy: new Date(now.getTime() + 1000) });
    const ok = decideLead(intent({ header: token }), facts({ apiKey: rotating }));
    expect(ok.outcome).toBe("settled");
    expect(ok.rotation).toEqual({ markedAt: clickedAt, rotateBy: rotating.rotateBy });
    const refused = decideLead(
      intent({ header: token }),
      facts({
        apiKey: rotating,
        customerByClick: { id: 5, status: "lead", partnerId: 11, clickId: "clk_1" },
      }),
    );
    expect(refused.outcome).toBe("refused");
    expect(refused.rotation).not.toBeNull();
  });

  it("applies rule 1 after the key, not rule 2", () => {
    expect(
      refusal(decideLead(intent({ header: token, clickId: null }), facts({ apiKey: key(1) }))),
    ).toMatchObject({
      status: 400,
      message: "click_id or customer_key is required",
    });
  });
});

describe("decideLead: test mode", () => {
  it("403 when a key's program differs from additional_data.program_id", () => {
    const decision = decideLead(
      intent({ header: token, testMode: true, eventProgramId: 2 }),
      facts({ apiKey: key(1) }),
    );
    expect(refusal(decision)).toMatchObject({
      status: 403,
      message: "program_id does not match the API key",
    });
  });

  it("program: key, else additional_data.program_id, else program_id, else the click's", () => {
    const programOf = (i: Partial<LeadIntent>, f: Partial<LeadFacts> = {}) => {
      const decision = decideLead(intent({ testMode: true, ...i }), facts(f));
      if (decision.outcome !== "test") throw new Error(decision.outcome);
      return [decision.programId, decision.write.leadEvent.viaApiKey, decision.allowedOrigins];
    };
    expect(programOf({ header: token, requestedProgramId: 2 }, { apiKey: key(1) })).toEqual([
      1,
      true,
      ["https://one.example"],
    ]);
    expect(programOf({ eventProgramId: 2, requestedProgramId: 1 })).toEqual([
      2,
      false,
      ["https://two.example"],
    ]);
    expect(programOf({ requestedProgramId: 2 })).toEqual([2, false, ["https://two.example"]]);
    expect(programOf({})).toEqual([1, false, ["https://one.example"]]);
  });

  it("400 for an unknown explicit program, or none at all without a key", () => {
    expect(refusal(decideLead(intent({ testMode: true, eventProgramId: 9 }), facts()))).toMatchObject({
      status: 400,
      message: "Unknown program_id",
    });
    expect(
      refusal(decideLead(intent({ testMode: true, clickId: null }), facts({ click: null }))),
    ).toMatchObject({
      status: 400,
      message: "program_id is required in test mode without an API key",
    });
  });

  it("a test key makes a test lead; it touches no customer even when one exists", () => {
    const decision = decideLead(
      intent({ header: token, customerKey: "u" }),
      facts({
        apiKey: key(1, { isTest: true }),
        customerByClick: { id: 5, status: "converted", partnerId: 11, clickId: "clk_1" },
      }),
    );
    expect(decision.outcome).toBe("test");
    if (decision.outcome !== "test") return;
    expect(decision.write).toEqual({
      kind: "test",
      leadEvent: expect.objectContaining({
        isTest: true,
        viaApiKey: true,
        settledAt: null,
        provisional: false,
      }),
    });
  });
});

describe("decideLead: live leads", () => {
  const customerNotFound = {
    status: 400,
    message: "Customer not found. Provide a valid click_id or customer_key.",
  };

  it.each<[string, Partial<LeadIntent>, Partial<LeadFacts>, object]>([
    ["unknown click (browser)", {}, { click: null }, customerNotFound],
    [
      "test click (browser)",
      {},
      { click: { clickId: "clk_1", programId: 1, partnerId: 11, clickedAt, isTest: true } },
      customerNotFound,
    ],
    ["browser program_id of another program", { requestedProgramId: 2 }, {}, customerNotFound],
    ["unknown click (server)", { header: token }, { apiKey: key(1), click: null }, customerNotFound],
    [
      "customer_key only, not saved yet (server)",
      { header: token, clickId: null, customerKey: "u" },
      { apiKey: key(1) },
      customerNotFound,
    ],
    [
      "click of another program (server)",
      { header: token },
      { apiKey: key(2) },
      { status: 400, message: "Customer does not belong to this program" },
    ],
    [
      "customer already a lead",
      {},
      { customerByClick: { id: 5, status: "lead", partnerId: 11, clickId: "clk_1" } },
      { status: 400, message: "Customer status cannot be updated to lead. Current status: lead" },
    ],
    [
      "customer converted (server)",
      { header: token },
      { apiKey: key(1), customerByClick: { id: 5, status: "converted", partnerId: 11, clickId: "clk_1" } },
      { status: 400, message: "Customer status cannot be updated to lead. Current status: converted" },
    ],
    [
      "customer_key held by another customer",
      { customerKey: "u" },
      { customerByKey: { id: 6, status: "converted", partnerId: 12, clickId: "clk_9" } },
      { status: 400, message: "Customer status cannot be updated to lead. Current status: converted" },
    ],
  ])("%s", (_name, i, f, expected) => {
    expect(refusal(decideLead(intent(i), facts(f)))).toMatchObject(expected);
  });

  it("a browser lead under server_required is provisional: no customer, key kept on the event", () => {
    const decision = decideLead(intent({ customerKey: "u", requestedProgramId: 1 }), facts());
    expect(decision).toMatchObject({
      outcome: "provisional",
      allowedOrigins: ["https://one.example"],
      body: { success: true, provisional: true },
      write: {
        kind: "provisional",
        leadEvent: { provisional: true, settledAt: null, customerKey: "u", partnerId: 11, viaApiKey: false },
        unchanged: { programId: 1, clickId: "clk_1", customerKey: "u" },
      },
    });
  });

  it("a browser lead under browser_allowed settles, creating the customer from the original click", () => {
    const decision = decideLead(
      intent({ customerKey: "u" }),
      facts({ click: { clickId: "clk_orig", programId: 2, partnerId: 21, clickedAt, isTest: false } }),
    );
    expect(decision).toMatchObject({
      outcome: "settled",
      body: { success: true, message: "Lead recorded" },
      write: {
        kind: "settle",
        customer: {
          kind: "create",
          programId: 2,
          partnerId: 21,
          clickId: "clk_orig",
          clickedAt,
          customerKey: "u",
          signedUpAt: now,
        },
        leadEvent: { provisional: false, settledAt: now, clickId: "clk_orig" },
        settleProvisionalOf: { programId: 2, clickId: "clk_orig" },
      },
    });
  });

  it("a server lead settles; a customer still in clicked is promoted, keeping its partner", () => {
    const decision = decideLead(
      intent({ header: token, customerKey: "u" }),
      facts({
        apiKey: key(1),
        customerByClick: { id: 5, status: "clicked", partnerId: 12, clickId: "clk_1" },
      }),
    );
    expect(decision).toMatchObject({
      outcome: "settled",
      write: {
        customer: { kind: "promote", customerId: 5, customerKey: "u" },
        leadEvent: { viaApiKey: true, partnerId: 12 },
        settleProvisionalOf: { programId: 1, clickId: "clk_1" },
      },
    });
  });

  it("a server lead ignores the top-level program_id (the key decides)", () => {
    const decision = decideLead(intent({ header: token, requestedProgramId: 2 }), facts({ apiKey: key(1) }));
    expect(decision.outcome).toBe("settled");
  });
});
