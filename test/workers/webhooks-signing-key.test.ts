import {
  createExecutionContext,
  createMessageBatch,
  getQueueResult,
  waitOnExecutionContext,
} from "cloudflare:test";
import { env } from "cloudflare:workers";
import { eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { SECRET_KEY_MISSING_MESSAGE } from "../../functions/api/routes/programs/webhooks.ts";
import { ConfigError, readConfig } from "../../lib/config/env.ts";
import { openSecret } from "../../lib/webhooks/secret-box.ts";
import {
  webhookSigningKeyMissing,
  webhooksQueueWhenSigningAllowed,
} from "../../lib/webhooks/signing-key-gate.ts";
import { webhookEndpoints } from "../../schema/index.ts";
import { call, type LooseJson } from "./dashboard-sign-in.ts";
import { createProgram, db, freshIp } from "./harness.ts";
import { ownerWithProgram } from "./program-admin-harness.ts";
import worker from "./routed-workers.ts";
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

/** A request to the worker with the deployed bindings (plus `extra`), as the person signed in. */
async function fetchDeployed(
  token: string,
  method: string,
  path: string,
  body: unknown,
  extra: Record<string, unknown> = {},
) {
  const ctx = createExecutionContext();
  const response = await worker.fetch(
    new Request(`https://api.test${path}`, {
      method,
      headers: {
        Authorization: `Bearer ${token}`,
        "Content-Type": "application/json",
        "CF-Connecting-IP": freshIp(),
      },
      body: JSON.stringify(body),
    }),
    deployed(extra),
    ctx,
  );
  await waitOnExecutionContext(ctx);
  return { status: response.status, body: (await response.json()) as LooseJson };
}

describe("a deployed worker without the key stores no new secret", () => {
  const url = "https://hooks.brand.example/sealed";
  it.each([
    {
      case: "create",
      path: (p: number, _e: number) => `/api/v1/programs/${p}/webhooks`,
      body: { url, events: ["sale.created"] },
    },
    {
      case: "rotate",
      path: (p: number, e: number) => `/api/v1/programs/${p}/webhooks/${e}/rotate-secret`,
      body: {},
    },
  ])("$case: 500 with the reason, nothing written", async ({ path, body }) => {
    const owner = await ownerWithProgram();
    const created = await call("POST", `/api/v1/programs/${owner.programId}/webhooks`, {
      token: owner.token,
      body: { url, events: ["sale.created"] },
    });
    const endpointId = created.body.data.endpoint.id as number;
    const [before] = await db.select().from(webhookEndpoints).where(eq(webhookEndpoints.id, endpointId));

    const refused = await fetchDeployed(owner.token, "POST", path(owner.programId, endpointId), body);
    expect(refused.status).toBe(500);
    expect(refused.body.data).toBeNull();
    expect(refused.body.error).toMatchObject({ status: 500, message: SECRET_KEY_MISSING_MESSAGE });
    const rows = await db
      .select()
      .from(webhookEndpoints)
      .where(eq(webhookEndpoints.programId, owner.programId));
    expect(rows).toEqual([before]);
  });

  it("with the key: a created secret is stored sealed, and opens with that key only", async () => {
    const owner = await ownerWithProgram();
    const created = await fetchDeployed(
      owner.token,
      "POST",
      `/api/v1/programs/${owner.programId}/webhooks`,
      { url, events: ["sale.created"] },
      { WEBHOOK_SECRET_KEY: productionKey },
    );
    expect(created.status).toBe(201);
    const [row] = await db
      .select()
      .from(webhookEndpoints)
      .where(eq(webhookEndpoints.id, created.body.data.endpoint.id));
    expect(row?.secret).toMatch(/^aesgcm:/);
    expect(await openSecret(row!.secret, productionKey)).toBe(created.body.data.secret);
  });
});
