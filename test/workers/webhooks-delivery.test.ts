import { and, eq, sql } from "drizzle-orm";
import { Webhook } from "standardwebhooks";
import { describe, expect, it } from "vitest";
import { approveDueCommissions } from "../../lib/commissions/approve-due-commissions.ts";
import { deliverWebhook } from "../../lib/webhooks/deliver.ts";
import { giveUpAfterMs, webhookRetryDelaySeconds } from "../../lib/webhooks/retry-policy.ts";
import { notifications, webhookDeliveryAttempts, webhookEndpoints } from "../../schema/index.ts";
import { call } from "./dashboard-sign-in.ts";
import { createProgram, db, postJson } from "./harness.ts";
import { bearer, leadPath, recordClick } from "./lead-helpers.ts";
import { ownerWithProgram } from "./program-admin-harness.ts";
import { refund, trackedSale } from "./refund-harness.ts";
import { countDatabaseRoundTrips } from "./round-trip-counter.ts";
import { runCron } from "./run-cron.ts";
import { click, sale, txn } from "./sale-harness.ts";
import {
  deliveriesOf,
  deliveryRow,
  endpointFor,
  eventsOf,
  receiverBox,
  signatureHeaders,
} from "./webhook-harness.ts";

const roundTripsOf = countDatabaseRoundTrips();
const allEvents = [
  "lead.created",
  "sale.created",
  "commission.created",
  "commission.updated",
  "commission.approved",
  "link.disabled",
];

describe("webhooks: from a sale to the brand's receiver, verified by the Standard Webhooks library", () => {
  it("writes the outbox in the sale's transaction, the cron queues it, the consumer signs and sends it", async () => {
    const p = await createProgram();
    const box = receiverBox();
    const endpoint = await endpointFor(p.programId, box.url, ["sale.created", "commission.created"]);
    const clickId = await click(p);
    const recorded = await sale(p, { transaction_id: txn(), amount_cents: 5000, click_id: clickId });
    expect(recorded.status).toBe(200);

    const pending = await deliveriesOf(endpoint.id);
    expect(pending.map((d) => d.status)).toEqual(["pending", "pending"]);
    await runCron("* * * * *");
    await expect.poll(async () => (await box.received()).length, { timeout: 10_000 }).toBe(2);

    const receiver = new Webhook(endpoint.secret);
    const bodies = (await box.received()).map((r) => {
      const verified = receiver.verify(r.body, signatureHeaders(r)) as Record<string, unknown>;
      expect(verified.id).toBe(r.headers["webhook-id"]);
      return verified;
    });
    const byType = Object.fromEntries(bodies.map((b) => [b.type, b]));
    expect(byType["sale.created"]).toMatchObject({
      api_version: "2026-11-01",
      data: { sale_id: recorded.body.sale_id, program_id: p.programId, amount_cents: 5000, currency: "USD" },
    });
    expect(byType["commission.created"]).toMatchObject({
      // The program holds nothing (hold_days 0): the commission is approved as it is created.
      data: {
        commission_id: recorded.body.commission_id,
        sale_id: recorded.body.sale_id,
        status: "approved",
      },
    });
    expect(String(byType["sale.created"]?.id)).toMatch(/^msg_[0-9a-f]{32}$/);
    await expect
      .poll(async () => (await deliveriesOf(endpoint.id)).map((d) => d.status))
      .toEqual(["succeeded", "succeeded"]);
    const attempts = await db
      .select()
      .from(webhookDeliveryAttempts)
      .where(eq(webhookDeliveryAttempts.endpointId, endpoint.id));
    expect(attempts.map((a) => [a.succeeded, a.responseStatus])).toEqual([
      [true, 200],
      [true, 200],
    ]);
  });

  it("refuses a tampered body, another secret and a stale timestamp", async () => {
    const p = await createProgram();
    const box = receiverBox();
    const endpoint = await endpointFor(p.programId, box.url, ["sale.created"]);
    await sale(p, { transaction_id: txn(), amount_cents: 700, click_id: await click(p) });
    const [delivery] = await deliveriesOf(endpoint.id);
    expect(await deliverWebhook(db, delivery!.id, { now: () => new Date(), secretKey: undefined })).toBe(
      "succeeded",
    );
    const [got] = await box.received();
    const headers = signatureHeaders(got!);
    expect(() => new Webhook(endpoint.secret).verify(got!.body.replace("700", "701"), headers)).toThrow();
    expect(() =>
      new Webhook("whsec_" + btoa("another secret of 32 bytes......")).verify(got!.body, headers),
    ).toThrow();
    const stale = { ...headers, "webhook-timestamp": String(Number(headers["webhook-timestamp"]) - 3600) };
    expect(() => new Webhook(endpoint.secret).verify(got!.body, stale)).toThrow();
  });
});

describe("webhooks: secret rotation with an overlap window", () => {
  it("signs with both secrets during the overlap (either verifies), then with the new one only", async () => {
    const owner = await ownerWithProgram();
    const box = receiverBox();
    const base = `/api/v1/programs/${owner.programId}/webhooks`;
    const created = await call("POST", base, {
      token: owner.token,
      body: { url: box.url, events: ["sale.created"] },
    });
    expect(created.status).toBe(201);
    const first = created.body.data.secret as string;
    const id = created.body.data.endpoint.id as number;

    const rotated = await call("POST", `${base}/${id}/rotate-secret`, {
      token: owner.token,
      body: { overlap_hours: 24 },
    });
    expect(rotated.status).toBe(200);
    const second = rotated.body.data.secret as string;
    expect(second).toMatch(/^whsec_/);
    expect(second).not.toBe(first);
    expect(rotated.body.data.endpoint.previous_secret_expires_at).not.toBeNull();

    const test = await call("POST", `${base}/${id}/test`, { token: owner.token });
    expect(test.status).toBe(202);
    await expect.poll(async () => (await box.received()).length, { timeout: 10_000 }).toBe(1);
    const [during] = await box.received();
    expect(during!.headers["webhook-signature"]?.split(" ")).toHaveLength(2);
    for (const secret of [first, second]) {
      expect(new Webhook(secret).verify(during!.body, signatureHeaders(during!))).toMatchObject({
        type: "webhook.test",
        id: test.body.data.event_id,
      });
    }

    const third = (
      await call("POST", `${base}/${id}/rotate-secret`, { token: owner.token, body: { overlap_hours: 0 } })
    ).body.data.secret as string;
    await call("POST", `${base}/${id}/test`, { token: owner.token });
    await expect.poll(async () => (await box.received()).length, { timeout: 10_000 }).toBe(2);
    const after = (await box.received())[1]!;
    expect(after.headers["webhook-signature"]?.split(" ")).toHaveLength(1);
    expect(new Webhook(third).verify(after.body, signatureHeaders(after))).toMatchObject({
      type: "webhook.test",
    });
    expect(() => new Webhook(second).verify(after.body, signatureHeaders(after))).toThrow();
  });
});

describe("webhooks: retries, backoff, disabling after three days, re-enabling", () => {
  it("retries a failing receiver with doubling delays for three days, then disables the endpoint and notifies", async () => {
    const owner = await ownerWithProgram();
    const box = receiverBox();
    await box.answer(500);
    const base = `/api/v1/programs/${owner.programId}/webhooks`;
    const created = await call("POST", base, {
      token: owner.token,
      body: { url: box.url, events: ["link.disabled"] },
    });
    const endpointId = created.body.data.endpoint.id as number;
    // A link turned off is the event (the link-state transaction writes it).
    const partner = await call("POST", `/api/v1/programs/${owner.programId}/partners`, {
      token: owner.token,
      body: { name: "Ada", email: `ada-${endpointId}@partners.example` },
    });
    const link = await call("POST", `/api/v1/programs/${owner.programId}/links`, {
      token: owner.token,
      body: { partner_id: partner.body.data.partner.id },
    });
    const linkPath = `/api/v1/programs/${owner.programId}/links/${link.body.data.link.id}`;
    expect((await call("PATCH", linkPath, { token: owner.token, body: { active: false } })).status).toBe(200);
    const [delivery] = await deliveriesOf(endpointId);
    expect(delivery).toMatchObject({ status: "pending", attempts: 0 });

    // The injected clock walks from one due time to the next; every attempt is a real POST to the receiver.
    const start = new Date(delivery!.nextAttemptAt);
    let now = start;
    const delays: number[] = [];
    const outcomes: string[] = [];
    for (let i = 0; i < 40; i++) {
      const outcome = await deliverWebhook(db, delivery!.id, { now: () => now, secretKey: undefined });
      outcomes.push(outcome);
      if (outcome !== "retry_scheduled") break;
      const row = await deliveryRow(delivery!.id);
      delays.push((row.nextAttemptAt.getTime() - now.getTime()) / 1000);
      now = row.nextAttemptAt;
    }
    expect(delays.slice(0, 12)).toEqual([30, 60, 120, 240, 480, 960, 1920, 3840, 7680, 15360, 21600, 21600]);
    expect(delays.map((_, i) => webhookRetryDelaySeconds(i + 1))).toEqual(delays);
    expect(outcomes.at(-1)).toBe("endpoint_disabled");
    expect(now.getTime() - start.getTime()).toBeGreaterThanOrEqual(giveUpAfterMs);
    expect(now.getTime() - start.getTime() - delays.at(-1)! * 1000).toBeLessThan(giveUpAfterMs);
    expect((await box.received()).length).toBe(outcomes.length);
    expect((await box.received()).every((r) => r.answered === 500)).toBe(true);

    expect(await deliveryRow(delivery!.id)).toMatchObject({ status: "failed", attempts: outcomes.length });
    const [endpoint] = await db.select().from(webhookEndpoints).where(eq(webhookEndpoints.id, endpointId));
    expect(endpoint).toMatchObject({ enabled: false, disabledReason: "failing" });
    const notified = await db
      .select()
      .from(notifications)
      .where(
        and(
          eq(notifications.programId, owner.programId),
          eq(notifications.kind, "webhook_endpoint_disabled"),
        ),
      );
    expect(notified).toHaveLength(1);
    expect(notified[0]).toMatchObject({ recipientType: "advertiser", recipientId: owner.advertiserId });

    const attempts = await call("GET", `${base}/${endpointId}/attempts`, { token: owner.token });
    expect(attempts.status).toBe(200);
    expect(attempts.body.data.attempts).toHaveLength(outcomes.length);
    expect(attempts.body.data.attempts[0]).toMatchObject({
      succeeded: false,
      response_status: 500,
      error: "HTTP 500",
      event_type: "link.disabled",
      delivery_status: "failed",
      attempt: outcomes.length,
    });
    expect(attempts.body.data.attempts[0].latency_ms).toBeGreaterThanOrEqual(0);

    // Disabled: a new event is not even written for it.
    await call("PATCH", linkPath, { token: owner.token, body: { active: true } });
    await call("PATCH", linkPath, { token: owner.token, body: { active: false } });
    expect(await deliveriesOf(endpointId)).toHaveLength(1);

    // Turned on again (a fresh three days), the receiver fixed: the next event is delivered.
    const enabled = await call("PATCH", `${base}/${endpointId}`, {
      token: owner.token,
      body: { enabled: true },
    });
    expect(enabled.body.data.endpoint).toMatchObject({
      enabled: true,
      failing_since: null,
      disabled_reason: null,
    });
    await box.answer(204);
    await call("PATCH", linkPath, { token: owner.token, body: { active: true } });
    await call("PATCH", linkPath, { token: owner.token, body: { active: false } });
    const [, fresh] = await deliveriesOf(endpointId);
    expect(await deliverWebhook(db, fresh!.id, { now: () => new Date(), secretKey: undefined })).toBe(
      "succeeded",
    );
    expect((await box.received()).at(-1)?.answered).toBe(204);
  });

  it("a delivery that succeeds after failures clears the endpoint's failure record", async () => {
    const p = await createProgram();
    const box = receiverBox();
    await box.answer(503);
    const endpoint = await endpointFor(p.programId, box.url, ["sale.created"]);
    await sale(p, { transaction_id: txn(), amount_cents: 100, click_id: await click(p) });
    const [delivery] = await deliveriesOf(endpoint.id);
    const t0 = new Date(delivery!.nextAttemptAt);
    expect(await deliverWebhook(db, delivery!.id, { now: () => t0, secretKey: undefined })).toBe(
      "retry_scheduled",
    );
    // Not due yet (a duplicate queue message): nothing is sent.
    expect(await deliverWebhook(db, delivery!.id, { now: () => t0, secretKey: undefined })).toBe("skipped");
    const [failing] = await db.select().from(webhookEndpoints).where(eq(webhookEndpoints.id, endpoint.id));
    expect(failing?.failingSince).not.toBeNull();
    await box.answer(200);
    const t1 = new Date(t0.getTime() + 30_000);
    expect(await deliverWebhook(db, delivery!.id, { now: () => t1, secretKey: undefined })).toBe("succeeded");
    const [healthy] = await db.select().from(webhookEndpoints).where(eq(webhookEndpoints.id, endpoint.id));
    expect(healthy?.failingSince).toBeNull();
    expect((await box.received()).map((r) => r.answered)).toEqual([503, 200]);
    // The same event id and body on the retry.
    const [a, b] = await box.received();
    expect(a!.headers["webhook-id"]).toBe(b!.headers["webhook-id"]);
    expect(a!.body).toBe(b!.body);
  });
});

describe("webhooks: every event type is written by its use case's own transaction", () => {
  it("lead.created, sale.created, commission.created, commission.updated, commission.approved", async () => {
    const p = await createProgram({ holdDays: 30 });
    const endpoint = await endpointFor(p.programId, receiverBox().url, allEvents);
    const clickId = await recordClick(p.links[0]);
    const lead = await postJson(leadPath, { click_id: clickId, customer_key: "wh-1" }, bearer(p.apiKey));
    expect(lead.status).toBe(200);
    const sold = await trackedSale(p, 10_000);
    const refunded = await trackedSale(p, 8_000, { partner: 1 });
    const refundAnswer = await refund(p, {
      transaction_id: refunded.transactionId,
      refund_amount_cents: 2500,
    });
    expect(refundAnswer.status).toBe(200);
    const approval = await approveDueCommissions(db, new Date(Date.now() + 40 * 86_400_000));
    expect(approval.approved).toBeGreaterThanOrEqual(1);

    const events = await eventsOf(p.programId);
    const types = events.map((e) => e.type).sort();
    expect(types).toEqual([
      "commission.approved",
      "commission.created",
      "commission.created",
      "commission.updated",
      "lead.created",
      "sale.created",
      "sale.created",
    ]);
    const data = (type: string) => events.find((e) => e.type === type)?.data;
    expect(data("lead.created")).toMatchObject({
      program_id: p.programId,
      click_id: clickId,
      customer_key: "wh-1",
    });
    expect(data("commission.updated")).toMatchObject({
      commission_id: refunded.commissionId,
      reason: "refund",
      refund: { amount_cents: 2500, refunded_total_cents: 2500 },
    });
    expect(data("commission.approved")).toMatchObject({
      commission_id: sold.commissionId,
      status: "approved",
    });
    expect(await deliveriesOf(endpoint.id)).toHaveLength(7);
  });

  it("writes nothing for a program without a subscribed endpoint, and nothing twice", async () => {
    const p = await createProgram();
    await endpointFor(p.programId, receiverBox().url, ["lead.created"]);
    await trackedSale(p, 1000);
    expect(await eventsOf(p.programId)).toEqual([]);
    const approved =
      await db.execute(sql`select webhook_enqueue(${p.programId}::int, 'lead.created', 'once', '{}'::jsonb, now())
                                          union all
                                          select webhook_enqueue(${p.programId}::int, 'lead.created', 'once', '{}'::jsonb, now())`);
    expect(approved.rows.map((r) => Number(r.webhook_enqueue))).toEqual([1, 0]);
  });
});

describe("webhooks never change or block a tracking call", () => {
  it("keeps the sale and lead round trips (outbox rides in the write) with endpoints subscribed", async () => {
    const p = await createProgram();
    await endpointFor(p.programId, receiverBox().url, allEvents);
    const clickId = await click(p);
    expect(
      await roundTripsOf(() => sale(p, { transaction_id: txn(), amount_cents: 1000, click_id: clickId })),
    ).toBe(1);
    const leadClick = await recordClick(p.links[1]);
    expect(
      await roundTripsOf(() =>
        postJson(leadPath, { click_id: leadClick, customer_key: "rt-wh" }, bearer(p.apiKey)),
      ),
    ).toBe(1);
    expect((await eventsOf(p.programId)).map((e) => e.type).sort()).toEqual([
      "commission.created",
      "lead.created",
      "sale.created",
    ]);
  });

  it("records the sale when writing its webhook fails inside the transaction", async () => {
    const p = await createProgram();
    const endpoint = await endpointFor(p.programId, receiverBox().url, ["sale.created"]);
    // The outbox insert fails for this program only (a trigger that raises), as a broken outbox would.
    const fn = `fail_webhooks_${p.programId}`;
    await db.execute(
      sql.raw(`create function ${fn}() returns trigger language plpgsql as $$ begin
                 if new.program_id = ${p.programId} then raise exception 'outbox broken'; end if; return new; end $$`),
    );
    await db.execute(
      sql.raw(`create trigger ${fn} before insert on webhook_events for each row execute function ${fn}()`),
    );
    try {
      const recorded = await sale(p, { transaction_id: txn(), amount_cents: 1200, click_id: await click(p) });
      expect(recorded.status).toBe(200);
      expect(recorded.body).toMatchObject({ success: true, sale_id: expect.any(Number) });
      expect(await deliveriesOf(endpoint.id)).toEqual([]);
    } finally {
      await db.execute(sql.raw(`drop trigger ${fn} on webhook_events`));
      await db.execute(sql.raw(`drop function ${fn}()`));
    }
  });
});
