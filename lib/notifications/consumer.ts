import { sql } from "drizzle-orm";
import { notifications } from "../../schema/notifications.ts";
import type { Database } from "../db/client.ts";
import { columnList } from "../db/columns.ts";
import { wellFormedJson } from "../db/well-formed-json.ts";
import { errorFields, rootLogger } from "../log.ts";
import { type NotificationMessage, NotificationMessageSchema } from "./message.ts";

/** Exponential backoff for redeliveries: 5 s, 10 s, 20 s ... capped at 10 minutes. */
export function retryDelaySeconds(attempts: number): number {
  return Math.min(600, 5 * 2 ** Math.max(0, attempts - 1));
}

/**
 * Writes the batch's messages as in-app notifications, idempotently (`on conflict (dedupe_key) do nothing`),
 * in ONE statement for the whole batch: a statement per message was a database round trip per refund
 * (`npm run bench -- refund`). A message that cannot be parsed is acknowledged and logged: retrying cannot
 * fix it. When the batch's write fails, each message is written alone, so that one the database refuses
 * fails alone; a message whose write fails is retried with backoff (one already written is skipped by its
 * dedupe key), and after the queue's `max_retries` it lands in the dead-letter queue.
 */
export async function consumeNotifications(batch: MessageBatch<unknown>, db: Database): Promise<void> {
  const readable: { message: Message<unknown>; notification: NotificationMessage }[] = [];
  for (const message of batch.messages) {
    const parsed = NotificationMessageSchema.safeParse(message.body);
    if (parsed.success) {
      readable.push({ message, notification: parsed.data });
    } else {
      rootLogger.error("unreadable notification dropped", undefined, { id: message.id });
      message.ack();
    }
  }
  if (readable.length === 0) return;
  if (readable.length > 1) {
    try {
      await db.execute(notificationsInsert(readable.map((r) => r.notification)));
      for (const { message } of readable) message.ack();
      return;
    } catch (error) {
      rootLogger.warn("notification batch write failed, writing each alone", errorFields(error));
    }
  }
  for (const { message, notification } of readable) {
    try {
      await db.execute(notificationsInsert([notification]));
      message.ack();
    } catch (error) {
      rootLogger.warn("notification write failed, retrying", { id: message.id, ...errorFields(error) });
      message.retry({ delaySeconds: retryDelaySeconds(message.attempts) });
    }
  }
}

/** The notifications as rows, from one JSON array parameter (one statement text for any number of them). */
function notificationsInsert(rows: readonly NotificationMessage[]) {
  const t = notifications;
  return sql`
    insert into ${t} (${columnList(t.recipientType, t.recipientId, t.programId, t.kind, t.payload, t.dedupeKey)})
    select n.recipient_type, n.recipient_id, n.program_id, n.kind, n.payload, n.dedupe_key
    from jsonb_to_recordset(${wellFormedJson(rows)}::jsonb)
      as n(recipient_type text, recipient_id integer, program_id integer, kind text, payload jsonb, dedupe_key text)
    on conflict (${columnList(t.dedupeKey)}) do nothing`;
}
