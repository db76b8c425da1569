import { sql } from "drizzle-orm";
import {
  bigint,
  bigserial,
  boolean,
  check,
  index,
  integer,
  jsonb,
  pgTable,
  text,
  timestamp,
  uniqueIndex,
} from "drizzle-orm/pg-core";
import { programs } from "./programs.ts";

export const stripeEventStatuses = ["claimed", "completed", "failed"] as const;
export type StripeEventStatus = (typeof stripeEventStatuses)[number];

/**
 * One row per payments-provider event the events worker acted on, deduped by the provider's event id.
 * A delivery claims the event (`claimed`, `claimed_at`, `attempts + 1`), does its idempotent writes, then
 * marks it `completed`; a replay of a completed event does nothing. A failure marks it `failed` (answered
 * 500, so the provider retries), and a claim older than the lease counts as abandoned: either may be
 * claimed again. `payload` keeps the raw body as received (signature verified), so an operator can
 * replay an event that failed for good (README, "Replaying an event").
 */
export const stripeEvents = pgTable(
  "stripe_events",
  {
    id: bigserial("id", { mode: "number" }).primaryKey(),
    eventId: text("event_id").notNull(),
    type: text("type").notNull(),
    accountId: text("account_id"),
    programId: integer("program_id").references(() => programs.id),
    livemode: boolean("livemode"),
    status: text("status", { enum: stripeEventStatuses }).notNull(),
    attempts: integer("attempts").notNull().default(1),
    claimedAt: timestamp("claimed_at", { withTimezone: true }).notNull(),
    completedAt: timestamp("completed_at", { withTimezone: true }),
    /** What the completed event did (`recorded`, `duplicate`, `not_attributed`, `reversed`, ...). */
    outcome: text("outcome"),
    lastError: text("last_error"),
    /**
     * The raw event body as received; null for rows claimed before it was kept, and once the retention job
     * dropped it (`lib/stripe/payload-retention.ts`).
     */
    payload: text("payload"),
    /** When the retention job removed the personal fields from `payload` (null: not yet). */
    payloadRedactedAt: timestamp("payload_redacted_at", { withTimezone: true }),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    uniqueIndex("stripe_events_event_id_unique").on(t.eventId),
    check("stripe_events_status_valid", sql`${t.status} in ('claimed', 'completed', 'failed')`),
    /** The retention job's two lookups: completed events still holding personal fields, or any payload. */
    index("stripe_events_payload_to_redact_idx")
      .on(t.completedAt)
      .where(sql`${t.status} = 'completed' and ${t.payload} is not null and ${t.payloadRedactedAt} is null`),
    index("stripe_events_payload_to_drop_idx")
      .on(t.completedAt)
      .where(sql`${t.status} = 'completed' and ${t.payload} is not null`),
  ],
);

export const stripeReversalKinds = ["refund", "chargeback"] as const;

/**
 * A refund or dispute event whose sale was not recorded yet (events arrive in any order). Kept here and
 * applied, with the same reversal logic, when a payment event records that sale; `applied_at` is set then.
 * `payment_id` is the charge's PaymentIntent id (or the charge id when it has none).
 */
export const stripePendingReversals = pgTable(
  "stripe_pending_reversals",
  {
    id: bigserial("id", { mode: "number" }).primaryKey(),
    programId: integer("program_id")
      .notNull()
      .references(() => programs.id),
    paymentId: text("payment_id").notNull(),
    eventId: text("event_id").notNull(),
    kind: text("kind", { enum: stripeReversalKinds }).notNull(),
    /** The provider's refund id (`re_...`) or dispute id (`dp_...`). */
    reversalId: text("reversal_id").notNull(),
    /** The charge's amount and its cumulative refunded amount (refunds), or the disputed amount. */
    chargeAmountCents: bigint("charge_amount_cents", { mode: "number" }).notNull(),
    refundedTotalCents: bigint("refunded_total_cents", { mode: "number" }).notNull(),
    reason: text("reason"),
    /**
     * The payment ids' namespace (`live`, or the program's test namespace for a `livemode: false` event): a kept
     * reversal applies only to a sale of its own mode (migration 0059).
     */
    namespace: text("namespace").notNull().default("live"),
    /** The refunds the event listed with their amounts, oldest first (`ProviderReversal.refunds`; migration 0059). */
    listedRefunds: jsonb("listed_refunds")
      .$type<Array<{ id: string; amountCents: number }>>()
      .notNull()
      .default(sql`'[]'::jsonb`),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
    appliedAt: timestamp("applied_at", { withTimezone: true }),
  },
  (t) => [
    uniqueIndex("stripe_pending_reversals_event_unique").on(t.eventId),
    index("stripe_pending_reversals_open_idx")
      .on(t.programId, t.paymentId)
      .where(sql`${t.appliedAt} is null`),
  ],
);

/**
 * A subscription's first invoice that matched no click, lead or customer: a pricing table or payment link
 * puts the click only on the Checkout Session (`client_reference_id`), and the invoice often arrives
 * before `checkout.session.completed`. Kept here (the payment as the events worker read it) and recorded
 * when the checkout event binds the buyer's provider customer to the program's customer; `applied_at`
 * and `outcome` say when and how it was resolved.
 */
export const stripePendingPayments = pgTable(
  "stripe_pending_payments",
  {
    id: bigserial("id", { mode: "number" }).primaryKey(),
    programId: integer("program_id")
      .notNull()
      .references(() => programs.id),
    eventId: text("event_id").notNull(),
    /** The invoice id. */
    objectId: text("object_id").notNull(),
    subscriptionId: text("subscription_id"),
    providerCustomerId: text("provider_customer_id"),
    /** The `ProviderPayment` the invoice was read as. */
    payment: jsonb("payment").notNull(),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
    appliedAt: timestamp("applied_at", { withTimezone: true }),
    outcome: text("outcome"),
  },
  (t) => [
    uniqueIndex("stripe_pending_payments_event_unique").on(t.eventId),
    index("stripe_pending_payments_open_subscription_idx")
      .on(t.programId, t.subscriptionId)
      .where(sql`${t.appliedAt} is null`),
    index("stripe_pending_payments_open_customer_idx")
      .on(t.programId, t.providerCustomerId)
      .where(sql`${t.appliedAt} is null`),
  ],
);
