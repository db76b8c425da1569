import { createExecutionContext, createMessageBatch, getQueueResult } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import worker from "../../functions/api/index.ts";
import { ConfigError, readConfig } from "../../lib/config/env.ts";
import {
  webhookSigningKeyMissing,
  webhooksQueueWhenSigningAllowed,
} from "../../lib/webhooks/signing-key-gate.ts";
import { createProgram } from "./harness.ts";
import { click, sale, txn } from "./sale-harness.ts";
import { deliveriesOf, endpointFor, receiverBox, setDeliveryDue } from "./webhook-harness.ts";

const productionKey = "a production key of some length";

/** The worker's bindings as deployed: no `WEBHOOK_SECRETS_UNSEALED` (the tests' and local stack's opt-out). */
function deployed(extra: Record<string, unknown> = {}) {
  const { WEBHOOK_SECRETS_UNSEALED: _optOut, ...rest } = env as unknown as Record<string, unknown>;
  return { ...rest, ...extra } as unknown as typeof env;
}

describe("webhook signing key gate", () => {
  it.each([
    { case: "deployed without WEBHOOK_SECRET_KEY", key: undefined, allow: false, missing: true },
    { case: "deployed with WEBHOOK_SECRET_KEY", key: productionKey, allow: false, missing: false },
    { case: "local stack or tests (opted out)", key: undefined, allow: true, missing: false },
    { case: "opted out and a key set", key: productionKey, allow: true, missing: false },
  ])("$case: signing key missing = $missing", ({ key, allow, missing }) => {
    const config = { webhookSecretKey: key, webhookSecretsUnsealedAllowed: allow };
    expect(webhookSigningKeyMissing(config)).toBe(missing);
    const queue = env.WEBHOOKS;
    expect(webhooksQueueWhenSigningAllowed(config, queue)).toBe(missing ? undefined : queue);
  });

  it.each([
    { value: "allow", allowed: true },
    { value: undefined, allowed: false },
  ])("reads WEBHOOK_SECRETS_UNSEALED=$value", ({ value, allowed }) => {
    const config = readConfig({ DATABASE_URL: "postgres://x", WEBHOOK_SECRETS_UNSEALED: value });
    expect(config.webhookSecretsUnsealedAllowed).toBe(allowed);
  });

  it("refuses any other WEBHOOK_SECRETS_UNSEALED value at start", () => {
    expect(() => readConfig({ DATABASE_URL: "postgres://x", WEBHOOK_SECRETS_UNSEALED: "yes" })).toThrow(
      ConfigError,
    );
  });

  it("a deployed worker without the key sends nothing: the delivery stays pending in the outbox", async () => {
    const p = await createProgram();
    const box = receiverBox();
    const endpoint = await endpointFor(p.programId, box.url, ["sale.created"]);
    await sale(p, { transaction_id: txn(), amount_cents: 700, click_id: await click(p) });
    const [delivery] = await deliveriesOf(endpoint.id);
    const message = { kind: "webhook_delivery", delivery_id: delivery!.id };
    // Not due for a day: no other file's cron hands it to the tests' (opted-out) consumer meanwhile.
    await setDeliveryDue(delivery!.id, new Date(Date.now() + 86_400_000));

    const paused = createMessageBatch<unknown>("affiliate-webhooks", [
      { id: "paused", timestamp: new Date(), attempts: 1, body: message },
    ]);
    const ctx = createExecutionContext();
    await worker.queue(paused, deployed(), ctx);
    expect((await getQueueResult(paused, ctx)).ackAll).toBe(true);
    expect(await box.received()).toEqual([]);
    expect((await deliveriesOf(endpoint.id))[0]).toMatchObject({ status: "pending", attempts: 0 });

    // The same message once the key is set (and the delivery due): sent and recorded.
    await setDeliveryDue(delivery!.id, new Date());
    const keyed = createMessageBatch<unknown>("affiliate-webhooks", [
      { id: "keyed", timestamp: new Date(), attempts: 1, body: message },
    ]);
    const keyedCtx = createExecutionContext();
    await worker.queue(keyed, deployed({ WEBHOOK_SECRET_KEY: productionKey }), keyedCtx);
    expect((await getQueueResult(keyed, keyedCtx)).explicitAcks).toEqual(["keyed"]);
    expect(await box.received()).toHaveLength(1);
    expect((await deliveriesOf(endpoint.id))[0]).toMatchObject({ status: "succeeded", attempts: 1 });
  });
});
