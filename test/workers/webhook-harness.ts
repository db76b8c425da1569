import { eq, sql } from "drizzle-orm";
import { inject } from "vitest";
import { sealSecret } from "../../lib/webhooks/secret-box.ts";
import { generateWebhookSecret } from "../../lib/webhooks/sign.ts";
import { webhookDeliveries, webhookEndpoints, webhookEvents } from "../../schema/index.ts";
import type { ReceivedWebhook } from "../setup/webhook-receiver.ts";
import { db, unique } from "./harness.ts";

/** A receiver box of its own (test/setup/webhook-receiver.ts): its URL, what it got, its answer. */
export function receiverBox() {
  const base = inject("webhookReceiverUrl");
  const name = unique("box");
  return {
    url: `${base}/hooks/${name}`,
    async received(): Promise<ReceivedWebhook[]> {
      return (await fetch(`${base}/log/${name}`)).json();
    },
    async answer(status: number): Promise<void> {
      await fetch(`${base}/control/${name}`, { method: "PUT", body: JSON.stringify({ status }) });
    },
  };
}

/** An endpoint written straight to the table (the routes are tested on their own), with its secret. */
export async function endpointFor(programId: number, url: string, events: string[]) {
  const secret = generateWebhookSecret();
  const [row] = await db
    .insert(webhookEndpoints)
    .values({ programId, url, events, secret: await sealSecret(secret, undefined) })
    .returning();
  return { id: row!.id, secret };
}

export async function eventsOf(programId: number) {
  return db
    .select()
    .from(webhookEvents)
    .where(eq(webhookEvents.programId, programId))
    .orderBy(webhookEvents.createdAt, webhookEvents.type);
}

export async function deliveriesOf(endpointId: number) {
  return db
    .select()
    .from(webhookDeliveries)
    .where(eq(webhookDeliveries.endpointId, endpointId))
    .orderBy(webhookDeliveries.id);
}

/** The delivery's headers as the reference library takes them. */
export function signatureHeaders(received: ReceivedWebhook): Record<string, string> {
  return {
    "webhook-id": received.headers["webhook-id"] ?? "",
    "webhook-timestamp": received.headers["webhook-timestamp"] ?? "",
    "webhook-signature": received.headers["webhook-signature"] ?? "",
  };
}

export async function deliveryRow(id: number) {
  const [row] = await db.select().from(webhookDeliveries).where(eq(webhookDeliveries.id, id));
  if (!row) throw new Error(`no delivery ${id}`);
  return row;
}

export async function setDeliveryDue(id: number, at: Date) {
  await db.execute(
    sql`update webhook_deliveries set next_attempt_at = ${at.toISOString()}::timestamptz where id = ${id}`,
  );
}
