import { describe, expect, it } from "vitest";
import { stripeEvents } from "../../schema/index.ts";
import { balanceOf, commissionsOf } from "../workers/sale-harness.ts";
import {
  checkoutSession,
  click,
  connectedProgram,
  db,
  deliver,
  event,
  eventRow,
  failingTrigger,
  salesOf,
  signatureFor,
} from "./stripe-harness.ts";

async function paidCheckoutEvent() {
  const p = await connectedProgram({ commissionRate: "20" });
  const clickId = await click(p);
  const session = checkoutSession({ amount: 10_000, metadata: { service_click_id: clickId } });
  return { p, session, e: event("checkout.session.completed", session, { account: p.accountId }) };
}

describe("signature", () => {
  it("answers 400 and records nothing for a bad, missing, foreign or stale signature, or a changed body", async () => {
    const { p, session, e } = await paidCheckoutEvent();
    const body = JSON.stringify(e);
    const good = await signatureFor(body);
    const stale = await signatureFor(body).then((header) =>
      header.replace(/t=\d+/, `t=${Math.floor(Date.now() / 1000) - 3600}`),
    );
    const now = Math.floor(Date.now() / 1000);
    const goodHex = good.split("v1=")[1];
    const attempts = [
      { payload: body, signature: "t=1,v1=deadbeef" },
      { payload: body, signature: "" },
      { payload: body, signature: `v1=${goodHex}` },
      { payload: body, signature: good.replace(/,v1=.*$/, "") },
      { payload: body, signature: good.replace("v1=", "v0=") },
      { payload: body, signature: good.toUpperCase() },
      { payload: body, signature: await signatureFor(body, undefined, now - 301) },
      { payload: body, signature: null },
      { payload: body, signature: await signatureFor(body, "whsec_someone_else") },
      { payload: body.replace('"amount_total":10000', '"amount_total":99999'), signature: good },
      { payload: body, signature: stale },
    ];
    for (const { payload, signature } of attempts) {
      const response = await deliver(payload, { signature });
      expect(response).toEqual({
        status: 400,
        body: { error: { code: "invalid_signature", message: "Webhook signature verification failed" } },
      });
    }
    expect(await eventRow(e.id)).toBeUndefined();
    expect(await salesOf(p.programId)).toHaveLength(0);
    expect(session.id).toMatch(/^cs_test_/);
  });

  it("answers 400 invalid_payload for a well signed body that is not JSON", async () => {
    for (const payload of ["not json", "{not json", '{"id": ']) {
      const response = await deliver(payload, { signature: await signatureFor(payload) });
      expect(response).toEqual({
        status: 400,
        body: { error: { code: "invalid_payload", message: "Webhook body is not valid JSON" } },
      });
    }
  });

  it("accepts the provider's scheme: a slightly old or early timestamp, and a good v1 among others", async () => {
    const now = Math.floor(Date.now() / 1000);
    for (const header of [
      (body: string) => signatureFor(body, undefined, now - 290),
      (body: string) => signatureFor(body, undefined, now + 600),
      // During a secret roll the provider signs with both secrets: one matching entry is enough.
      async (body: string) =>
        `${(await signatureFor(body)).replace(/,v1=.*$/, "")},v1=${"0".repeat(64)},${(await signatureFor(body)).split(",")[1]},v0=ab`,
    ]) {
      const { e } = await paidCheckoutEvent();
      const body = JSON.stringify(e);
      const response = await deliver(body, { signature: await header(body) });
      expect(response).toMatchObject({ status: 200, body: { received: true, outcome: "recorded" } });
    }
  });

  it("answers 404 off its path and 405 for other methods", async () => {
    const { SELF } = await import("cloudflare:test");
    expect((await SELF.fetch("https://events.test/webhooks/other", { method: "POST" })).status).toBe(404);
    const get = await SELF.fetch("https://events.test/webhooks/stripe");
    expect(get.status).toBe(405);
    expect(get.headers.get("Allow")).toBe("POST");
  });
});

describe("event claims: completed once, retried after a failure", () => {
  it("keeps the raw body of a claimed event for an operator's replay", async () => {
    const { e } = await paidCheckoutEvent();
    const body = JSON.stringify(e);
    await deliver(body);
    const row = await eventRow(e.id);
    expect(row?.payload).toBe(body);
    expect(JSON.parse(row?.payload ?? "{}")).toMatchObject({ id: e.id, type: e.type });
  });

  it("answers a replay of a completed event 200 and does nothing", async () => {
    const { p, e } = await paidCheckoutEvent();
    const first = await deliver(e);
    const replay = await deliver(e);
    expect(first.body).toMatchObject({ outcome: "recorded" });
    expect(replay).toEqual({ status: 200, body: { received: true, outcome: "already_processed" } });
    expect(await salesOf(p.programId)).toHaveLength(1);
    expect(await eventRow(e.id)).toMatchObject({ status: "completed", attempts: 1 });
  });

  it("a failure before the sale is written: 500, nothing recorded, and the retry records it once", async () => {
    const { p, session, e } = await paidCheckoutEvent();
    const drop = await failingTrigger(
      "affiliate_sale_events",
      "before insert",
      `new.processor_event_id = '${session.payment_intent}'`,
    );
    try {
      const failed = await deliver(e);
      expect(failed).toEqual({
        status: 500,
        body: { error: { code: "internal_error", message: "Event processing failed" } },
      });
      expect(await salesOf(p.programId)).toHaveLength(0);
      const row = await eventRow(e.id);
      expect(row).toMatchObject({ status: "failed", attempts: 1 });
      // The stored cause names the error by its codes, never by its text (which quotes the statement's values).
      expect(JSON.parse(String(row?.lastError))).toMatchObject({ pg_code: "P0001" });
      expect(row?.lastError).not.toContain(String(session.payment_intent));
    } finally {
      await drop();
    }
    const retried = await deliver(e);
    expect(retried.body).toMatchObject({ outcome: "recorded" });
    expect(await eventRow(e.id)).toMatchObject({ status: "completed", attempts: 2, lastError: null });
    expect(await salesOf(p.programId)).toHaveLength(1);
  });

  it("a failure after the sale is written: 500, and the retry completes without doubling anything", async () => {
    const { p, e } = await paidCheckoutEvent();
    const drop = await failingTrigger(
      "stripe_events",
      "before update",
      `new.status = 'completed' and new.event_id = '${e.id}'`,
    );
    try {
      const failed = await deliver(e);
      expect(failed.status).toBe(500);
      expect(await salesOf(p.programId)).toHaveLength(1);
      expect(await eventRow(e.id)).toMatchObject({ status: "failed" });
    } finally {
      await drop();
    }
    const retried = await deliver(e);
    expect(retried.body).toMatchObject({ outcome: "duplicate", recorded_by: "events" });
    expect(await salesOf(p.programId)).toHaveLength(1);
    expect(await commissionsOf(p.programId)).toHaveLength(1);
    expect(await balanceOf(p.programId, p.partnerIds[0])).toBe(2_000);
    expect(await eventRow(e.id)).toMatchObject({ status: "completed", attempts: 2 });
  });

  it("answers 409 while another delivery holds a live claim, and re-claims one past its lease", async () => {
    const { p, e } = await paidCheckoutEvent();
    const claim = (minutesAgo: number) =>
      db
        .insert(stripeEvents)
        .values({
          eventId: e.id,
          type: e.type,
          accountId: p.accountId,
          programId: p.programId,
          status: "claimed",
          claimedAt: new Date(Date.now() - minutesAgo * 60_000),
        })
        .onConflictDoUpdate({
          target: stripeEvents.eventId,
          set: { claimedAt: new Date(Date.now() - minutesAgo * 60_000) },
        });
    await claim(1);
    const busy = await deliver(e);
    expect(busy).toEqual({
      status: 409,
      body: { error: { code: "in_progress", message: "This event is being processed; retry later" } },
    });
    expect(await salesOf(p.programId)).toHaveLength(0);

    await claim(6);
    const reclaimed = await deliver(e);
    expect(reclaimed.body).toMatchObject({ outcome: "recorded" });
    expect(await eventRow(e.id)).toMatchObject({ status: "completed", attempts: 2 });
  });
});
