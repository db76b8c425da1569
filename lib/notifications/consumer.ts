import { sql } from "drizzle-orm";
import { notifications } from "../../schema/notifications.ts";
import type { Database } from "../db/client.ts";
import { columnList } from "../db/columns.ts";
import { errorFields, rootLogger } from "../log.ts";
import { NotificationMessageSchema } from "./message.ts";

/** Exponential backoff for redeliveries: 5 s, 10 s, 20 s ... capped at 10 minutes. */
export function retryDelaySeconds(attempts: number): number {
  return Math.min(600, 5 * 2 ** Math.max(0, attempts - 1));
}

/**
 * Writes each message as one in-app notification, idempotently (`on conflict (dedupe_key) do nothing`).
 * A message that cannot be parsed is acknowledged and logged: retrying cannot fix it. A database failure
 * retries that message with backoff; after the queue's `max_retries` it lands in the dead-letter queue.
 */
export async function consumeNotifications(batch: MessageBatch<unknown>, db: Database): Promise<void> {
  for (const message of batch.messages) {
    const parsed = NotificationMessageSchema.safeParse(message.body);
    if (!parsed.success) {
      rootLogger.error("unreadable notification dropped", undefined, { id: message.id });
      message.ack();
      continue;
    }
    const n = parsed.data;
    const t = notifications;
    try {
      await db.execute(sql`
        insert into ${t} (${columnList(t.recipientType, t.recipientId, t.programId, t.kind, t.payload, t.dedupeKey)})
        values (${n.recipient_type}, ${n.recipient_id}, ${n.program_id}, ${n.kind}, ${JSON.stringify(n.payload)}::jsonb,
                ${n.dedupe_key})
        on conflict (${columnList(t.dedupeKey)}) do nothing`);
      message.ack();
    } catch (error) {
      rootLogger.warn("notification write failed, retrying", { id: message.id, ...errorFields(error) });
      message.retry({ delaySeconds: retryDelaySeconds(message.attempts) });
    }
  }
}
