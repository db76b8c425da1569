import { sql } from "drizzle-orm";
import {
  bigint,
  bigserial,
  check,
  index,
  integer,
  pgTable,
  primaryKey,
  serial,
  text,
  timestamp,
  uniqueIndex,
} from "drizzle-orm/pg-core";
import { commissions, refunds } from "./commissions.ts";
import { partners } from "./partners.ts";
import { programs } from "./programs.ts";

/** A partner's balance in one program and currency. May go negative after refunds of credited commissions. */
export const partnerBalances = pgTable(
  "partner_balances",
  {
    programId: integer("program_id")
      .notNull()
      .references(() => programs.id),
    partnerId: integer("partner_id")
      .notNull()
      .references(() => partners.id),
    currency: text("currency").notNull(),
    balanceCents: bigint("balance_cents", { mode: "number" }).notNull().default(0),
    updatedAt: timestamp("updated_at", { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.programId, t.partnerId, t.currency] })],
);

export const ledgerCauses = [
  "commission_credit",
  "refund_deduction",
  "withdrawal",
  "withdrawal_release",
] as const;

/** A commission's credit is written at most once; a second credit runs into this index. */
export const commissionCreditOnceIndex = "balance_ledger_commission_credit_once";

/**
 * Every balance change, tied to its commission and cause: the balance always equals the sum of its rows.
 * A commission is credited at most once (partial unique index).
 */
export const balanceLedger = pgTable(
  "balance_ledger",
  {
    id: bigserial("id", { mode: "number" }).primaryKey(),
    programId: integer("program_id").notNull(),
    partnerId: integer("partner_id").notNull(),
    currency: text("currency").notNull(),
    amountCents: bigint("amount_cents", { mode: "number" }).notNull(),
    cause: text("cause", { enum: ledgerCauses }).notNull(),
    commissionId: bigint("commission_id", { mode: "number" }).references(() => commissions.id),
    refundId: bigint("refund_id", { mode: "number" }).references(() => refunds.id),
    withdrawalId: integer("withdrawal_id"),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    index("balance_ledger_partner_idx").on(t.programId, t.partnerId, t.currency),
    uniqueIndex(commissionCreditOnceIndex).on(t.commissionId).where(sql`${t.cause} = 'commission_credit'`),
    uniqueIndex("balance_ledger_refund_once").on(t.refundId).where(sql`${t.refundId} is not null`),
  ],
);

export const withdrawalStatuses = ["open", "paid", "cancelled"] as const;

/** A partner's payout request; open ones are reduced to fit when refunds shrink the balance. */
export const withdrawals = pgTable(
  "withdrawals",
  {
    id: serial("id").primaryKey(),
    programId: integer("program_id")
      .notNull()
      .references(() => programs.id),
    partnerId: integer("partner_id")
      .notNull()
      .references(() => partners.id),
    currency: text("currency").notNull(),
    amountCents: bigint("amount_cents", { mode: "number" }).notNull(),
    status: text("status", { enum: withdrawalStatuses }).notNull().default("open"),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
    updatedAt: timestamp("updated_at", { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    check("withdrawals_amount_nonnegative", sql`${t.amountCents} >= 0`),
    /** A refund fits the partner's open withdrawals to the new balance: find them without a scan. */
    index("withdrawals_partner_open_idx")
      .on(t.programId, t.partnerId, t.currency)
      .where(sql`${t.status} = 'open'`),
  ],
);
