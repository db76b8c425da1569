import { sql } from "drizzle-orm";
import {
  bigint,
  bigserial,
  boolean,
  index,
  integer,
  jsonb,
  pgTable,
  serial,
  text,
  timestamp,
  uniqueIndex,
} from "drizzle-orm/pg-core";
import { programs } from "./programs.ts";

/**
 * A brand's receiver of signed webhooks. `secret` (and during a rotation's overlap `previous_secret`) is sealed
 * by `lib/webhooks/secret-box.ts`: it must be recoverable, since the service signs with it.
 */
export const webhookEndpoints = pgTable(
  "webhook_endpoints",
  {
    id: serial("id").primaryKey(),
    programId: integer("program_id")
      .notNull()
      .references(() => programs.id, { onDelete: "cascade" }),
    url: text("url").notNull(),
    description: text("description"),
    events: text("events").array().notNull(),
    enabled: boolean("enabled").notNull().default(true),
    secret: text("secret").notNull(),
    previousSecret: text("previous_secret"),
    previousSecretExpiresAt: timestamp("previous_secret_expires_at", { withTimezone: true }),
    /** Set at the first failed attempt after a success; an endpoint failing for three days is disabled. */
    failingSince: timestamp("failing_since", { withTimezone: true }),
    disabledReason: text("disabled_reason"),
    disabledAt: timestamp("disabled_at", { withTimezone: true }),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
    updatedAt: timestamp("updated_at", { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [index("webhook_endpoints_program_idx").on(t.programId)],
);

/** The outbox: one row per event, its id (`msg_...`) stable across every delivery and retry. */
export const webhookEvents = pgTable(
  "webhook_events",
  {
    id: text("id").primaryKey(),
    programId: integer("program_id").notNull(),
    type: text("type").notNull(),
    apiVersion: text("api_version").notNull().default("2026-11-01"),
    dedupeKey: text("dedupe_key").notNull(),
    data: jsonb("data").notNull(),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    uniqueIndex("webhook_events_dedupe_key_unique").on(t.dedupeKey),
    /** Retention (migration 0022): old events, oldest first. */
    index("webhook_events_created_at_idx").on(t.createdAt),
  ],
);

export const webhookDeliveryStatuses = ["pending", "succeeded", "failed", "cancelled"] as const;

/** One event to one endpoint: due at `next_attempt_at`, leased to the queue until `lease_until`. */
export const webhookDeliveries = pgTable(
  "webhook_deliveries",
  {
    id: bigserial("id", { mode: "number" }).primaryKey(),
    eventId: text("event_id")
      .notNull()
      .references(() => webhookEvents.id, { onDelete: "cascade" }),
    endpointId: integer("endpoint_id")
      .notNull()
      .references(() => webhookEndpoints.id, { onDelete: "cascade" }),
    status: text("status", { enum: webhookDeliveryStatuses }).notNull().default("pending"),
    attempts: integer("attempts").notNull().default(0),
    nextAttemptAt: timestamp("next_attempt_at", { withTimezone: true }).notNull(),
    leaseUntil: timestamp("lease_until", { withTimezone: true }),
    lastAttemptAt: timestamp("last_attempt_at", { withTimezone: true }),
    completedAt: timestamp("completed_at", { withTimezone: true }),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    uniqueIndex("webhook_deliveries_event_endpoint_unique").on(t.eventId, t.endpointId),
    index("webhook_deliveries_endpoint_idx").on(t.endpointId, t.status),
    /** Retention (migration 0022): done deliveries in completion order. */
    index("webhook_deliveries_done_idx").on(t.completedAt).where(sql`${t.status} <> 'pending'`),
  ],
);

/** Every HTTP attempt, as the brand sees it in `GET .../webhooks/{endpointId}/attempts`. */
export const webhookDeliveryAttempts = pgTable(
  "webhook_delivery_attempts",
  {
    id: bigserial("id", { mode: "number" }).primaryKey(),
    deliveryId: bigint("delivery_id", { mode: "number" })
      .notNull()
      .references(() => webhookDeliveries.id, { onDelete: "cascade" }),
    endpointId: integer("endpoint_id")
      .notNull()
      .references(() => webhookEndpoints.id, { onDelete: "cascade" }),
    eventId: text("event_id").notNull(),
    attempt: integer("attempt").notNull(),
    attemptedAt: timestamp("attempted_at", { withTimezone: true }).notNull(),
    succeeded: boolean("succeeded").notNull(),
    responseStatus: integer("response_status"),
    latencyMs: integer("latency_ms").notNull(),
    error: text("error"),
  },
  (t) => [
    index("webhook_delivery_attempts_endpoint_idx").on(t.endpointId, t.attemptedAt),
    /** The cascade from a deleted delivery finds its attempts through it (migration 0022). */
    index("webhook_delivery_attempts_delivery_idx").on(t.deliveryId),
  ],
);
