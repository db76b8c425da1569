import { inArray } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { fixedClock } from "../../lib/clock.ts";
import { applyPayloadRetention, payloadRetention } from "../../lib/stripe/payload-retention.ts";
import { redactPersonalFields } from "../../lib/stripe/personal-fields.ts";
import { stripeEvents } from "../../schema/stripe-events.ts";
import { createProgram, db, unique } from "./harness.ts";
import { runCron } from "./run-cron.ts";

const day = 24 * 60 * 60 * 1000;

/** A `checkout.session.completed` as the provider sends it, with the buyer's details in every usual place. */
function checkoutPayload(eventId: string): string {
  return JSON.stringify({
    id: eventId,
    object: "event",
    account: "acct_retention",
    type: "checkout.session.completed",
    created: 1_790_000_000,
    livemode: true,
    data: {
      object: {
        id: "cs_test_retention",
        object: "checkout.session",
        amount_total: 4900,
        currency: "usd",
        customer: "cus_retention",
        payment_intent: "pi_retention",
        payment_status: "paid",
        mode: "payment",
        client_reference_id: "clk_reference",
        customer_email: "buyer@example.com",
        customer_details: {
          email: "buyer@example.com",
          name: "Buyer Person",
          phone: "+15550100",
          address: { line1: "1 Main St", city: "Springfield", country: "US" },
        },
        collected_information: { shipping_details: { name: "Buyer Person" } },
        shipping_details: { address: { line1: "1 Main St" }, name: "Buyer Person" },
        metadata: {
          service_click_id: "clk_metadata",
          program_id: "7",
          service_customer_key: "buyer@example.com",
          crm_note: "VIP, call on Tuesdays",
        },
      },
      previous_attributes: { customer_email: "old@example.com" },
    },
  });
}

interface Seed {
  status: "claimed" | "completed" | "failed";
  /** How long before `now` it was claimed (and completed, when completed). */
  ageMs: number;
  payload?: string | null;
}

/**
 * Stored events at chosen ages. Their times are in the past of the real clock and the job runs at the real
 * time, so it touches no event another test stores now (the database is shared).
 */
async function seedEvents(now: Date, seeds: Seed[]): Promise<number[]> {
  const p = await createProgram();
  const rows = await db
    .insert(stripeEvents)
    .values(
      seeds.map((s) => {
        const eventId = unique("evt_retention");
        const at = new Date(now.getTime() - s.ageMs);
        return {
          eventId,
          type: "checkout.session.completed",
          accountId: "acct_retention",
          programId: p.programId,
          livemode: true,
          status: s.status,
          claimedAt: at,
          completedAt: s.status === "completed" ? at : null,
          outcome: s.status === "completed" ? "recorded" : null,
          payload: s.payload === undefined ? checkoutPayload(eventId) : s.payload,
        };
      }),
    )
    .returning({ id: stripeEvents.id });
  return rows.map((r) => r.id);
}

async function eventsById(ids: number[]) {
  const rows = await db.select().from(stripeEvents).where(inArray(stripeEvents.id, ids));
  return ids.map((id) => rows.find((r) => r.id === id));
}

async function runUntilDone(now: Date) {
  for (;;) {
    const r = await applyPayloadRetention(db, now);
    if (r.payloadsDropped === 0 && r.payloadsRedacted === 0) return;
  }
}

describe("redactPersonalFields", () => {
  it("removes the buyer's details and the brand's metadata, keeps ids, amounts and our metadata keys", () => {
    const redacted = JSON.parse(redactPersonalFields(checkoutPayload("evt_1")) ?? "null");
    expect(redacted).toEqual({
      id: "evt_1",
      object: "event",
      account: "acct_retention",
      type: "checkout.session.completed",
      created: 1_790_000_000,
      livemode: true,
      data: {
        object: {
          id: "cs_test_retention",
          object: "checkout.session",
          amount_total: 4900,
          currency: "usd",
          customer: "cus_retention",
          payment_intent: "pi_retention",
          payment_status: "paid",
          mode: "payment",
          client_reference_id: "clk_reference",
          metadata: { service_click_id: "clk_metadata", program_id: "7" },
        },
        previous_attributes: {},
      },
    });
  });

  it.each([
    ["not JSON", "{not json"],
    ["a JSON array", "[1,2]"],
    ["a JSON string", '"evt"'],
  ])("gives null for a payload that is %s", (_what, payload) => {
    expect(redactPersonalFields(payload)).toBeNull();
  });

  it("keeps an escaped NUL as the same escape (the text column never holds a raw NUL)", () => {
    const payload = JSON.stringify({ id: "evt_nul", data: { object: { description: "a\u0000b" } } });
    expect(redactPersonalFields(payload)).toBe(payload);
  });
});

describe("applyPayloadRetention", () => {
  it("redacts completed events after 30 days, drops their payload after 90, keeps unfinished ones whole", async () => {
    const now = new Date();
    const [young, justBefore, justAfter, old, failedOld, claimedOld, unreadable] = await seedEvents(now, [
      { status: "completed", ageMs: 29 * day },
      { status: "completed", ageMs: 30 * day },
      { status: "completed", ageMs: 30 * day + 1 },
      { status: "completed", ageMs: 90 * day + 1 },
      { status: "failed", ageMs: 200 * day },
      { status: "claimed", ageMs: 200 * day },
      { status: "completed", ageMs: 31 * day, payload: "{not json" },
    ]);
    const ids = [young, justBefore, justAfter, old, failedOld, claimedOld, unreadable] as number[];
    const before = await eventsById(ids);

    await runUntilDone(fixedClock(now).now());
    const after = await eventsById(ids);

    // Untouched: younger than 30 days (the boundary itself included), or not completed.
    for (const i of [0, 1, 4, 5]) {
      expect(after[i]?.payload).toBe(before[i]?.payload);
      expect(after[i]?.payloadRedactedAt).toBeNull();
    }
    expect(after[4]?.payload).toContain("buyer@example.com");
    // Past 30 days: no personal field left, replayable ids kept.
    const redacted = after[2];
    expect(redacted?.payloadRedactedAt?.getTime()).toBe(now.getTime());
    expect(redacted?.payload).not.toContain("buyer@example.com");
    expect(redacted?.payload).not.toContain("Buyer Person");
    expect(redacted?.payload).toContain("pi_retention");
    expect(redacted?.payload).toContain("clk_metadata");
    // Past 90 days: no payload at all; an unreadable payload cannot be redacted, so it is not kept.
    expect(after[3]?.payload).toBeNull();
    expect(after[6]).toMatchObject({ payload: null });
    expect(after[6]?.payloadRedactedAt?.getTime()).toBe(now.getTime());
    // Everything else about the event stays.
    for (const [i, row] of after.entries()) {
      expect(row).toMatchObject({
        status: before[i]?.status,
        outcome: before[i]?.outcome,
        eventId: before[i]?.eventId,
      });
    }
  });

  it("is idempotent: a second run changes nothing", async () => {
    const now = new Date();
    const ids = await seedEvents(now, [
      { status: "completed", ageMs: 45 * day },
      { status: "completed", ageMs: 120 * day },
    ]);
    await runUntilDone(now);
    const first = await eventsById(ids);
    await runUntilDone(new Date(now.getTime() + 1000));
    expect(await eventsById(ids)).toEqual(first);
  });

  it("works in bounded batches: a run touches at most batchSize * maxBatches rows", async () => {
    const now = new Date();
    const ids = await seedEvents(
      now,
      Array.from({ length: 5 }, () => ({ status: "completed" as const, ageMs: 40 * day })),
    );
    const small = { ...payloadRetention, batchSize: 2, maxBatches: 1 };
    expect(await applyPayloadRetention(db, now, small)).toMatchObject({ payloadsRedacted: 2 });
    await runUntilDone(now);
    for (const row of await eventsById(ids)) expect(row?.payloadRedactedAt).not.toBeNull();
  });

  it("runs from the cron trigger", async () => {
    const ids = await seedEvents(new Date(), [{ status: "completed", ageMs: 35 * day }]);
    // Earlier tests' leftovers of other files are not this test's concern: run until ours is done.
    for (let i = 0; i < 5; i++) {
      await runCron();
      const [row] = await eventsById(ids);
      if (row?.payloadRedactedAt) return;
    }
    throw new Error("the scheduled run did not redact the event");
  });
});
