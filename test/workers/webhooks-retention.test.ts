import { eq, inArray, sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { applyWebhookRetention, webhookRetention } from "../../lib/webhooks/retention.ts";
import { webhookDeliveries, webhookDeliveryAttempts, webhookEvents } from "../../schema/index.ts";
import { createProgram, db, unique } from "./harness.ts";
import { runCron } from "./run-cron.ts";
import { endpointFor } from "./webhook-harness.ts";

const day = 24 * 60 * 60 * 1000;

type Status = "pending" | "succeeded" | "failed" | "cancelled";

interface Seed {
  status: Status;
  /** How long before `now` the event was written. */
  createdAgoMs: number;
  /** How long before `now` the delivery completed (done deliveries only). */
  completedAgoMs?: number;
  /** Attempts recorded for the delivery. */
  attempts?: number;
}

/**
 * An event, one delivery to a fresh endpoint and its attempts, at chosen ages (in the past of the real clock,
 * so the job run at the real time touches no row another test writes now; the database is shared).
 */
async function seedDelivery(now: Date, seed: Seed) {
  const p = await createProgram();
  const endpoint = await endpointFor(p.programId, "http://127.0.0.1:9/never", ["sale.created"]);
  const eventId = unique("msg_retention");
  const createdAt = new Date(now.getTime() - seed.createdAgoMs);
  const completedAt =
    seed.completedAgoMs === undefined ? null : new Date(now.getTime() - seed.completedAgoMs);
  await db.insert(webhookEvents).values({
    id: eventId,
    programId: p.programId,
    type: "sale.created",
    dedupeKey: `retention:${eventId}`,
    data: { sale_id: 1 },
    createdAt,
  });
  const [delivery] = await db
    .insert(webhookDeliveries)
    .values({
      eventId,
      endpointId: endpoint.id,
      status: seed.status,
      attempts: seed.attempts ?? 1,
      nextAttemptAt: seed.status === "pending" ? new Date(now.getTime() + day) : createdAt,
      completedAt,
      createdAt,
    })
    .returning({ id: webhookDeliveries.id });
  const deliveryId = delivery!.id;
  for (let attempt = 1; attempt <= (seed.attempts ?? 1); attempt++) {
    await db.insert(webhookDeliveryAttempts).values({
      deliveryId,
      endpointId: endpoint.id,
      eventId,
      attempt,
      attemptedAt: completedAt ?? createdAt,
      succeeded: seed.status === "succeeded" && attempt === (seed.attempts ?? 1),
      responseStatus: 500,
      latencyMs: 12,
    });
  }
  return { eventId, deliveryId, endpointId: endpoint.id };
}

/** An event whose delivery was removed with its endpoint (deleting an endpoint cascades to its deliveries). */
async function seedOrphanEvent(now: Date, createdAgoMs: number) {
  const p = await createProgram();
  const eventId = unique("msg_orphan");
  await db.insert(webhookEvents).values({
    id: eventId,
    programId: p.programId,
    type: "link.disabled",
    dedupeKey: `retention:${eventId}`,
    data: { link_id: 1 },
    createdAt: new Date(now.getTime() - createdAgoMs),
  });
  return eventId;
}

async function present(seeded: { eventId: string; deliveryId: number }) {
  const [events, deliveries, attempts] = await Promise.all([
    db.select({ id: webhookEvents.id }).from(webhookEvents).where(eq(webhookEvents.id, seeded.eventId)),
    db
      .select({ id: webhookDeliveries.id })
      .from(webhookDeliveries)
      .where(eq(webhookDeliveries.id, seeded.deliveryId)),
    db
      .select({ id: webhookDeliveryAttempts.id })
      .from(webhookDeliveryAttempts)
      .where(eq(webhookDeliveryAttempts.deliveryId, seeded.deliveryId)),
  ]);
  return { event: events.length, delivery: deliveries.length, attempts: attempts.length };
}

async function runUntilDone(now: Date) {
  for (;;) {
    const r = await applyWebhookRetention(db, now);
    if (r.webhookDeliveriesDeleted === 0 && r.webhookEventsDeleted === 0) return;
  }
}

describe("applyWebhookRetention", () => {
  it("deletes deliveries done for more than 30 days with their attempts and events, keeps the rest", async () => {
    const now = new Date();
    const cases: { name: string; seed: Seed; kept: boolean }[] = [
      {
        name: "succeeded 31 days ago",
        seed: { status: "succeeded", createdAgoMs: 31 * day, completedAgoMs: 31 * day, attempts: 2 },
        kept: false,
      },
      {
        name: "gave up 31 days ago",
        seed: { status: "failed", createdAgoMs: 34 * day, completedAgoMs: 31 * day, attempts: 3 },
        kept: false,
      },
      {
        name: "cancelled 40 days ago",
        seed: { status: "cancelled", createdAgoMs: 41 * day, completedAgoMs: 40 * day },
        kept: false,
      },
      {
        name: "succeeded 29 days ago",
        seed: { status: "succeeded", createdAgoMs: 29 * day, completedAgoMs: 29 * day },
        kept: true,
      },
      {
        name: "exactly 30 days ago",
        seed: { status: "succeeded", createdAgoMs: 30 * day, completedAgoMs: 30 * day },
        kept: true,
      },
      {
        name: "gave up 2 days ago after 3 days",
        seed: { status: "failed", createdAgoMs: 33 * day, completedAgoMs: 2 * day, attempts: 2 },
        kept: true,
      },
      {
        name: "still pending, written 60 days ago",
        seed: { status: "pending", createdAgoMs: 60 * day, attempts: 4 },
        kept: true,
      },
    ];
    const seeded = [];
    for (const c of cases) seeded.push(await seedDelivery(now, c.seed));
    const orphanOld = await seedOrphanEvent(now, 31 * day);
    const orphanYoung = await seedOrphanEvent(now, 29 * day);
    const before = await Promise.all(seeded.map(present));

    await runUntilDone(now);

    for (const [i, c] of cases.entries()) {
      const after = await present(seeded[i]!);
      if (c.kept) expect(after, c.name).toEqual(before[i]);
      else expect(after, c.name).toEqual({ event: 0, delivery: 0, attempts: 0 });
    }
    expect(before.every((b) => b.attempts > 0)).toBe(true);
    const events = await db
      .select({ id: webhookEvents.id })
      .from(webhookEvents)
      .where(inArray(webhookEvents.id, [orphanOld, orphanYoung]));
    expect(events.map((e) => e.id)).toEqual([orphanYoung]);
  });

  it("keeps an event while another of its deliveries is kept", async () => {
    const now = new Date();
    const done = await seedDelivery(now, {
      status: "succeeded",
      createdAgoMs: 35 * day,
      completedAgoMs: 35 * day,
    });
    const [other] = await db
      .select({ id: webhookDeliveries.endpointId })
      .from(webhookDeliveries)
      .where(eq(webhookDeliveries.id, done.deliveryId));
    const p = await createProgram();
    const second = await endpointFor(p.programId, "http://127.0.0.1:9/other", ["sale.created"]);
    const [pending] = await db
      .insert(webhookDeliveries)
      .values({
        eventId: done.eventId,
        endpointId: second.id,
        nextAttemptAt: new Date(now.getTime() + day),
        createdAt: new Date(now.getTime() - 35 * day),
      })
      .returning({ id: webhookDeliveries.id });
    expect(other?.id).toBe(done.endpointId);

    await runUntilDone(now);

    expect(await present(done)).toEqual({ event: 1, delivery: 0, attempts: 0 });
    expect(await present({ eventId: done.eventId, deliveryId: pending!.id })).toMatchObject({ delivery: 1 });
  });

  it("is idempotent: a second run deletes nothing more of these rows", async () => {
    const now = new Date();
    const old = await seedDelivery(now, {
      status: "succeeded",
      createdAgoMs: 45 * day,
      completedAgoMs: 45 * day,
    });
    const recent = await seedDelivery(now, {
      status: "failed",
      createdAgoMs: 10 * day,
      completedAgoMs: 7 * day,
    });
    await runUntilDone(now);
    const first = [await present(old), await present(recent)];
    await runUntilDone(new Date(now.getTime() + 1000));
    expect([await present(old), await present(recent)]).toEqual(first);
    expect(first).toEqual([
      { event: 0, delivery: 0, attempts: 0 },
      { event: 1, delivery: 1, attempts: 1 },
    ]);
  });

  it("works in bounded batches: a run deletes at most batchSize * maxBatches deliveries", async () => {
    const now = new Date();
    const seeded = [];
    for (let i = 0; i < 5; i++) {
      seeded.push(
        await seedDelivery(now, { status: "succeeded", createdAgoMs: 50 * day, completedAgoMs: 50 * day }),
      );
    }
    const small = { ...webhookRetention, batchSize: 2, maxBatches: 1 };
    expect(await applyWebhookRetention(db, now, small)).toMatchObject({ webhookDeliveriesDeleted: 2 });
    await runUntilDone(now);
    for (const s of seeded) expect(await present(s)).toEqual({ event: 0, delivery: 0, attempts: 0 });
  });

  it.each([
    [
      "the done deliveries, oldest first",
      sql`select id from webhook_deliveries where status <> 'pending' and completed_at < now()
          order by completed_at limit 500`,
      "webhook_deliveries_done_idx",
    ],
    [
      "the cascade from a delivery to its attempts",
      sql`select id from webhook_delivery_attempts where delivery_id = 1`,
      "webhook_delivery_attempts_delivery_idx",
    ],
    [
      "the old events, oldest first",
      sql`select id from webhook_events where created_at < now() order by created_at limit 500`,
      "webhook_events_created_at_idx",
    ],
  ])("finds %s through an index of migration 0022", async (_what, query, index) => {
    // The test tables are small enough for a sequential scan to win; with it priced out, the planner must
    // have an index that answers the batch's select.
    const [, plan] = await db.batch([
      db.execute(sql`set local enable_seqscan = off`),
      db.execute(sql`explain ${query}`),
    ]);
    const text = plan.rows.map((r) => Object.values(r).join(" ")).join("\n");
    expect(text).toContain(index);
  });

  it("runs from the five-minute cron trigger", async () => {
    const seeded = await seedDelivery(new Date(), {
      status: "succeeded",
      createdAgoMs: 35 * day,
      completedAgoMs: 35 * day,
    });
    // Earlier tests' leftovers of other files are not this test's concern: run until ours is gone.
    for (let i = 0; i < 5; i++) {
      await runCron();
      if ((await present(seeded)).delivery === 0) return;
    }
    throw new Error("the scheduled run did not delete the delivery");
  });
});
