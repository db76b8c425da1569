import { bigserial, index, integer, jsonb, pgTable, text, timestamp, uniqueIndex } from "drizzle-orm/pg-core";

export const notificationRecipients = ["partner", "advertiser"] as const;

/**
 * In-app notifications: a refund's written in the refund's own transaction, the others by the queue consumer
 * after the response. `dedupe_key` makes a redelivered message, or a rewritten refund's, a no-op.
 */
export const notifications = pgTable(
  "notifications",
  {
    id: bigserial("id", { mode: "number" }).primaryKey(),
    recipientType: text("recipient_type", { enum: notificationRecipients }).notNull(),
    recipientId: integer("recipient_id").notNull(),
    programId: integer("program_id"),
    kind: text("kind").notNull(),
    payload: jsonb("payload").notNull(),
    dedupeKey: text("dedupe_key").notNull(),
    readAt: timestamp("read_at", { withTimezone: true }),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    uniqueIndex("notifications_dedupe_key_unique").on(t.dedupeKey),
    index("notifications_recipient_idx").on(t.recipientType, t.recipientId, t.createdAt),
  ],
);
