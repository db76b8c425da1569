import { sql } from "drizzle-orm";
import {
  bigint,
  bigserial,
  boolean,
  check,
  index,
  integer,
  pgTable,
  text,
  timestamp,
  uniqueIndex,
} from "drizzle-orm/pg-core";
import { saleEvents } from "./events.ts";
import { partners } from "./partners.ts";
import { programs } from "./programs.ts";

/** Names of the unique indexes the write paths recognize in a 23505 (conflict retry, duplicate skip). */
export const commissionSaleUniqueIndex = "commissions_sale_unique";
export const refundIdempotencyUniqueIndex = "refunds_sale_idempotency_unique";

export const commissionStatuses = ["pending", "approved", "paid", "refunded", "reversed"] as const;
export type CommissionStatus = (typeof commissionStatuses)[number];

/**
 * A partner commission created from one attributed sale. `amount_cents` is the original commission;
 * `deducted_cents` the cumulative reduction by refunds, so the current value is their difference and a
 * proportional reduction is always computed from the cumulative refunded fraction (no drift).
 * `credited_at` is set when the commission is credited to the partner balance (on approval).
 */
export const commissions = pgTable(
  "commissions",
  {
    id: bigserial("id", { mode: "number" }).primaryKey(),
    saleId: bigint("sale_id", { mode: "number" })
      .notNull()
      .references(() => saleEvents.id),
    programId: integer("program_id")
      .notNull()
      .references(() => programs.id),
    partnerId: integer("partner_id")
      .notNull()
      .references(() => partners.id),
    customerId: bigint("customer_id", { mode: "number" }),
    amountCents: bigint("amount_cents", { mode: "number" }).notNull(),
    deductedCents: bigint("deducted_cents", { mode: "number" }).notNull().default(0),
    currency: text("currency").notNull(),
    status: text("status", { enum: commissionStatuses }).notNull(),
    holdUntil: timestamp("hold_until", { withTimezone: true }),
    approvedAt: timestamp("approved_at", { withTimezone: true }),
    creditedAt: timestamp("credited_at", { withTimezone: true }),
    paidOutAt: timestamp("paid_out_at", { withTimezone: true }),
    needsManualReview: boolean("needs_manual_review").notNull().default(false),
    refundReason: text("refund_reason"),
    /** Optimistic-concurrency guard for read-decide-write updates. */
    version: integer("version").notNull().default(0),
    /** Fraud signal codes found for this commission's sale; a program may hold flagged ones for review. */
    fraudFlags: text("fraud_flags").array().notNull().default(sql`'{}'::text[]`),
    isTest: boolean("is_test").notNull().default(false),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
    updatedAt: timestamp("updated_at", { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    uniqueIndex(commissionSaleUniqueIndex).on(t.saleId),
    index("commissions_status_hold_idx").on(t.status, t.holdUntil),
    index("commissions_partner_idx").on(t.programId, t.partnerId),
    index("commissions_program_created_idx").on(t.programId, t.createdAt),
    index("commissions_created_brin").using("brin", t.createdAt),
    check("commissions_amount_nonnegative", sql`${t.amountCents} >= 0`),
    check("commissions_deducted_range", sql`${t.deductedCents} between 0 and ${t.amountCents}`),
  ],
);

export const refundReasons = ["refund", "chargeback"] as const;

/**
 * One applied refund of a sale. `refund_id` (the brand's id, or the provider's) makes it idempotent; a
 * refund sent without one is keyed by its amount, so the same amount twice is one refund.
 */
export const refunds = pgTable(
  "refunds",
  {
    id: bigserial("id", { mode: "number" }).primaryKey(),
    saleId: bigint("sale_id", { mode: "number" })
      .notNull()
      .references(() => saleEvents.id),
    /** The sale's program, set by the database at insert (trigger, migration 0016) for the dashboard feed. */
    programId: integer("program_id"),
    commissionId: bigint("commission_id", { mode: "number" }).references(() => commissions.id),
    idempotencyKey: text("idempotency_key").notNull(),
    refundId: text("refund_id"),
    /** The amount the caller asked for (null: everything left); `amount_cents` is what was applied. */
    requestedCents: bigint("requested_cents", { mode: "number" }),
    amountCents: bigint("amount_cents", { mode: "number" }).notNull(),
    refundedTotalCents: bigint("refunded_total_cents", { mode: "number" }).notNull(),
    deductionCents: bigint("deduction_cents", { mode: "number" }).notNull().default(0),
    reason: text("reason", { enum: refundReasons }).notNull().default("refund"),
    refundReason: text("refund_reason"),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    uniqueIndex(refundIdempotencyUniqueIndex).on(t.saleId, t.idempotencyKey),
    index("refunds_created_idx").on(t.createdAt),
    index("refunds_program_created_idx").on(t.programId, t.createdAt),
  ],
);
