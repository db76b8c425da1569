import { describe, expect, it } from "vitest";
import {
  checkoutSession,
  click,
  connectedProgram,
  deliver,
  event,
  eventRow,
  salesOf,
} from "./stripe-harness.ts";

/**
 * Postgres refuses a NUL character in text and jsonb. A signed event carrying one must not fail (a 500 is
 * retried by the provider for days): identifiers holding control characters count as absent, and an event
 * whose recorded fields still hold a NUL is acknowledged as skipped.
 */
describe("events with NUL characters", () => {
  const nul = "\u0000";

  const cases: Array<{ name: string; metadata: Record<string, string>; email: string }> = [
    {
      name: "metadata customer key",
      metadata: { service_customer_key: `user${nul}` },
      email: "a@example.com",
    },
    { name: "metadata program id", metadata: { program_id: `1${nul}` }, email: "a@example.com" },
    { name: "buyer email", metadata: {}, email: `a${nul}b@example.com` },
  ];

  it.each(cases)(
    "completes a paid checkout with a NUL in the $name (no 500)",
    async ({ metadata, email }) => {
      const p = await connectedProgram();
      const session = checkoutSession({ metadata, email });
      const e = event("checkout.session.completed", session, { account: p.accountId });
      const response = await deliver(e);
      expect(response.status).toBe(200);
      expect((await eventRow(e.id))?.status).toBe("completed");
    },
  );

  it("treats a NUL-carrying click id in the metadata as no click id", async () => {
    const p = await connectedProgram();
    const clickId = await click(p);
    const session = checkoutSession({ metadata: { service_click_id: `${clickId}${nul}` } });
    const e = event("checkout.session.completed", session, { account: p.accountId });
    const response = await deliver(e);
    expect(response.status).toBe(200);
    expect(response.body.outcome).not.toBe("recorded_attributed");
    expect((await eventRow(e.id))?.status).toBe("completed");
    expect((await salesOf(p.programId)).length).toBeLessThanOrEqual(1);
  });

  /** A well-formed checkout event, each case above breaking one field of its outer shape. */
  const envelope = () => event("checkout.session.completed", checkoutSession(), { account: "acct_x" });

  // Found by the fuzzer (webhook-fuzz.test.ts): a signed `null` answered 500.
  it.each([
    ["null", "null"],
    ["a list", "[]"],
    ["a number", "1"],
    ["an object without id", JSON.stringify({ type: "checkout.session.completed" })],
    ["an object with a numeric id", JSON.stringify({ id: 1, type: "checkout.session.completed" })],
    ["an object without type", JSON.stringify({ id: "evt_x" })],
    // Found by an audit: these answered 500 (a TypeError, or a claim written with no livemode).
    ["an event without data", JSON.stringify({ ...envelope(), data: undefined })],
    ["an event with null data", JSON.stringify({ ...envelope(), data: null })],
    ["an event with a list as data", JSON.stringify({ ...envelope(), data: [] })],
    ["an event without livemode", JSON.stringify({ ...envelope(), livemode: undefined })],
    ["an event with a string livemode", JSON.stringify({ ...envelope(), livemode: "true" })],
    ["an event with a numeric account", JSON.stringify({ ...envelope(), account: 5 })],
    ["an event with a list as account", JSON.stringify({ ...envelope(), account: ["acct_x"] })],
  ])("acknowledges a signed body that is %s as ignored, without a 500", async (_name, body) => {
    const response = await deliver(body);
    expect(response.status).toBe(200);
    expect(response.body).toEqual({ received: true, outcome: "ignored", reason: "not an event object" });
  });

  it("acknowledges an event whose account holds a NUL without claiming it", async () => {
    const p = await connectedProgram();
    const e = event("checkout.session.completed", checkoutSession(), { account: `${p.accountId}${nul}` });
    const response = await deliver(e);
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({ received: true, outcome: "ignored" });
    expect(await eventRow(e.id)).toBeUndefined();
  });

  it("skips a payment whose recorded ids hold a NUL, and answers 200", async () => {
    const p = await connectedProgram();
    const session = checkoutSession({ paymentIntent: `pi_${nul}x` });
    const e = event("checkout.session.completed", session, { account: p.accountId });
    const response = await deliver(e);
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({ received: true, outcome: "skipped" });
    expect(await salesOf(p.programId)).toEqual([]);
  });
});

/**
 * A lone UTF-16 surrogate (`\ud800` in the JSON) is not storable as such: `jsonb` refuses its escape, and as
 * `text` it becomes U+FFFD. The API refuses it in a body (400); an event is the provider's, so it is recorded
 * as the database stores it, never answered 500 (which the provider would retry for days).
 */
describe("events with lone surrogates", () => {
  it("records a paid checkout whose payment id holds a lone surrogate, the surrogate stored as U+FFFD", async () => {
    const p = await connectedProgram();
    const clickId = await click(p);
    const session = checkoutSession({ paymentIntent: "pi_\ud800x", metadata: { service_click_id: clickId } });
    const e = event("checkout.session.completed", session, { account: p.accountId });
    const response = await deliver(e);
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({ outcome: "recorded" });
    expect((await eventRow(e.id))?.status).toBe("completed");
    const sales = await salesOf(p.programId);
    expect(sales.map((s) => s.processorEventId)).toEqual(["pi_\ufffdx"]);
  });
});
