import { createExecutionContext, createMessageBatch, getQueueResult } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { eq } from "drizzle-orm";
import { describe, expect, inject, it } from "vitest";
import worker from "../../functions/api/index.ts";
import { retryDelaySeconds } from "../../lib/notifications/consumer.ts";
import type { NotificationMessage } from "../../lib/notifications/message.ts";
import { notifications } from "../../schema/index.ts";
import { createProgram, db, unique } from "./harness.ts";

function message(overrides: Partial<NotificationMessage> = {}): NotificationMessage {
  return {
    recipient_type: "partner",
    recipient_id: 1,
    program_id: null,
    kind: "commission_reversed",
    payload: { commission_id: 1 },
    dedupe_key: unique("dedupe"),
    ...overrides,
  };
}

async function rowsFor(dedupeKey: string) {
  return db.select().from(notifications).where(eq(notifications.dedupeKey, dedupeKey));
}

describe("notifications queue consumer", () => {
  it("delivers a message sent on the queue binding to the consumer, which writes it", async () => {
    const p = await createProgram();
    const sent = message({ recipient_id: p.partnerIds[0], program_id: p.programId });
    await env.NOTIFICATIONS.send(sent);
    await expect.poll(async () => (await rowsFor(sent.dedupe_key)).length, { timeout: 10_000 }).toBe(1);
    expect((await rowsFor(sent.dedupe_key))[0]).toMatchObject({
      kind: "commission_reversed",
      payload: { commission_id: 1 },
    });
  });

  it("writes a redelivered message once and acknowledges both", async () => {
    const sent = message();
    const batch = createMessageBatch<unknown>("affiliate-notifications", [
      { id: "m1", timestamp: new Date(), attempts: 1, body: sent },
      { id: "m2", timestamp: new Date(), attempts: 2, body: sent },
    ]);
    const ctx = createExecutionContext();
    await worker.queue(batch, env, ctx);
    const result = await getQueueResult(batch, ctx);
    expect(result.explicitAcks.sort()).toEqual(["m1", "m2"]);
    expect(await rowsFor(sent.dedupe_key)).toHaveLength(1);
  });

  it("writes every readable message of a batch, and acknowledges the unreadable one beside them", async () => {
    const sent = [message(), message({ recipient_type: "advertiser", kind: "manual_review" })];
    const batch = createMessageBatch<unknown>("affiliate-notifications", [
      { id: "a", timestamp: new Date(), attempts: 1, body: sent[0] },
      { id: "bad", timestamp: new Date(), attempts: 1, body: { nonsense: true } },
      { id: "b", timestamp: new Date(), attempts: 1, body: sent[1] },
    ]);
    const ctx = createExecutionContext();
    await worker.queue(batch, env, ctx);
    expect((await getQueueResult(batch, ctx)).explicitAcks.sort()).toEqual(["a", "b", "bad"]);
    expect(await rowsFor(sent[0]!.dedupe_key)).toMatchObject([
      { recipientType: "partner", kind: "commission_reversed", payload: { commission_id: 1 } },
    ]);
    expect(await rowsFor(sent[1]!.dedupe_key)).toMatchObject([
      { recipientType: "advertiser", recipientId: 1, programId: null, kind: "manual_review" },
    ]);
  });

  it("when the database refuses one message of a batch, writes the others and retries only that one", async () => {
    const good = message();
    const cut = message({ payload: { reason: "cut inside an emoji \uD83D" } });
    const refused = message({ payload: { reason: "a NUL \u0000 jsonb refuses" } });
    const batch = createMessageBatch<unknown>("affiliate-notifications", [
      { id: "good", timestamp: new Date(), attempts: 1, body: good },
      { id: "refused", timestamp: new Date(), attempts: 2, body: refused },
      { id: "cut", timestamp: new Date(), attempts: 1, body: cut },
    ]);
    const ctx = createExecutionContext();
    await worker.queue(batch, env, ctx);
    const result = await getQueueResult(batch, ctx);
    expect(result.explicitAcks.sort()).toEqual(["cut", "good"]);
    expect(result.retryMessages).toEqual([expect.objectContaining({ msgId: "refused" })]);
    expect(await rowsFor(good.dedupe_key)).toHaveLength(1);
    expect(await rowsFor(refused.dedupe_key)).toHaveLength(0);
    // A lone surrogate is stored as the replacement character, as a text parameter of its own was.
    expect(await rowsFor(cut.dedupe_key)).toMatchObject([
      { payload: { reason: "cut inside an emoji \uFFFD" } },
    ]);
  });

  it("acknowledges an unreadable message instead of retrying it forever", async () => {
    const batch = createMessageBatch<unknown>("affiliate-notifications", [
      { id: "bad", timestamp: new Date(), attempts: 1, body: { nonsense: true } },
    ]);
    const ctx = createExecutionContext();
    await worker.queue(batch, env, ctx);
    expect((await getQueueResult(batch, ctx)).explicitAcks).toEqual(["bad"]);
  });

  it("retries with backoff when the database write fails", async () => {
    const batch = createMessageBatch<unknown>("affiliate-notifications", [
      { id: "m", timestamp: new Date(), attempts: 3, body: message() },
      { id: "n", timestamp: new Date(), attempts: 1, body: message() },
    ]);
    const ctx = createExecutionContext();
    // The database endpoint answers 404 on this path, so the write fails the way an outage would.
    const unreachable = { ...env, NEON_FETCH_ENDPOINT: `${inject("sqlEndpointUrl")}-unavailable` };
    await worker.queue(batch, unreachable, ctx);
    const result = await getQueueResult(batch, ctx);
    expect(result.retryMessages).toEqual([{ msgId: "m" }, { msgId: "n" }]);
    expect(result.explicitAcks).toEqual([]);
    expect([1, 2, 3, 4, 10].map(retryDelaySeconds)).toEqual([5, 10, 20, 40, 600]);
  });
});
