import { createExecutionContext, createMessageBatch, getQueueResult } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { Webhook } from "standardwebhooks";
import { describe, expect, inject, it } from "vitest";
import worker from "../../functions/api/index.ts";
import { deliverWebhook } from "../../lib/webhooks/deliver.ts";
import { openSecret, sealSecret } from "../../lib/webhooks/secret-box.ts";
import { generateWebhookSecret } from "../../lib/webhooks/sign.ts";
import { webhookEndpoints } from "../../schema/index.ts";
import { createProgram, db } from "./harness.ts";
import { click, sale, txn } from "./sale-harness.ts";
import { deliveriesOf, receiverBox, signatureHeaders } from "./webhook-harness.ts";

describe("webhook secrets at rest", () => {
  it("seals with WEBHOOK_SECRET_KEY (AES-GCM), opens with it, refuses another key or none", async () => {
    const secret = generateWebhookSecret();
    const key = "a production key of some length";
    const sealed = await sealSecret(secret, key);
    expect(sealed).toMatch(/^aesgcm:/);
    expect(sealed).not.toContain(secret.slice(6));
    expect(await sealSecret(secret, key)).not.toBe(sealed); // a fresh IV each time
    expect(await openSecret(sealed, key)).toBe(secret);
    await expect(openSecret(sealed, "another key of some length")).rejects.toThrow();
    await expect(openSecret(sealed, undefined)).rejects.toThrow("WEBHOOK_SECRET_KEY is not set");
    expect(await openSecret(await sealSecret(secret, undefined), undefined)).toBe(secret);
  });

  it("a sealed secret signs deliveries the reference library verifies", async () => {
    const p = await createProgram();
    const box = receiverBox();
    const secret = generateWebhookSecret();
    const key = "a production key of some length";
    const [endpoint] = await db
      .insert(webhookEndpoints)
      .values({
        programId: p.programId,
        url: box.url,
        events: ["sale.created"],
        secret: await sealSecret(secret, key),
      })
      .returning();
    await sale(p, { transaction_id: txn(), amount_cents: 300, click_id: await click(p) });
    const [delivery] = await deliveriesOf(endpoint!.id);
    expect(await deliverWebhook(db, delivery!.id, { now: () => new Date(), secretKey: key })).toBe(
      "succeeded",
    );
    const [got] = await box.received();
    expect(new Webhook(secret).verify(got!.body, signatureHeaders(got!))).toMatchObject({
      type: "sale.created",
    });
  });
});

describe("webhooks queue consumer", () => {
  it("acknowledges an unreadable message instead of retrying it forever", async () => {
    const batch = createMessageBatch<unknown>("affiliate-webhooks", [
      { id: "bad", timestamp: new Date(), attempts: 1, body: { kind: "webhook_delivery", delivery_id: "x" } },
    ]);
    const ctx = createExecutionContext();
    await worker.queue(batch, env, ctx);
    expect((await getQueueResult(batch, ctx)).explicitAcks).toEqual(["bad"]);
  });

  it("acknowledges a delivery that is gone or done (nothing to send)", async () => {
    const batch = createMessageBatch<unknown>("affiliate-webhooks", [
      {
        id: "gone",
        timestamp: new Date(),
        attempts: 1,
        body: { kind: "webhook_delivery", delivery_id: 999999999 },
      },
    ]);
    const ctx = createExecutionContext();
    await worker.queue(batch, env, ctx);
    expect((await getQueueResult(batch, ctx)).explicitAcks).toEqual(["gone"]);
  });

  it("retries the message when the database cannot be reached (the attempt could not be recorded)", async () => {
    const batch = createMessageBatch<unknown>("affiliate-webhooks", [
      { id: "m", timestamp: new Date(), attempts: 1, body: { kind: "webhook_delivery", delivery_id: 1 } },
    ]);
    const ctx = createExecutionContext();
    const unreachable = { ...env, NEON_FETCH_ENDPOINT: `${inject("sqlEndpointUrl")}-unavailable` };
    await worker.queue(batch, unreachable, ctx);
    const result = await getQueueResult(batch, ctx);
    expect(result.retryMessages).toEqual([{ msgId: "m" }]);
    expect(result.explicitAcks).toEqual([]);
  });
});
