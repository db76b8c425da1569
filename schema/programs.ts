import { sql } from "drizzle-orm";
import {
  boolean,
  check,
  index,
  integer,
  numeric,
  pgTable,
  serial,
  text,
  timestamp,
  uniqueIndex,
} from "drizzle-orm/pg-core";
import { advertisers } from "./workspaces.ts";

export const leadAuthPolicies = ["server_required", "browser_allowed"] as const;
export const commissionTypes = ["percent", "fixed", "recurring_percent", "recurring_fixed"] as const;
export type LeadAuthPolicy = (typeof leadAuthPolicies)[number];
export type CommissionType = (typeof commissionTypes)[number];

/**
 * A partner program. `commission_rate` is a percentage for the percent types and an amount in the sale
 * currency's major unit for the fixed types; `duration_months` 0 means lifetime for recurring types.
 */
/** One connected payments account per program; a second program connecting it runs into this index. */
export const programStripeAccountUniqueIndex = "programs_stripe_account_unique";

export const programs = pgTable(
  "programs",
  {
    id: serial("id").primaryKey(),
    advertiserId: integer("advertiser_id")
      .notNull()
      .references(() => advertisers.id),
    name: text("name").notNull(),
    domain: text("domain").notNull(),
    attributionWindowDays: integer("attribution_window_days").notNull().default(60),
    leadAuthPolicy: text("lead_auth_policy", { enum: leadAuthPolicies }).notNull().default("server_required"),
    commissionType: text("commission_type", { enum: commissionTypes }).notNull().default("percent"),
    commissionRate: numeric("commission_rate", { precision: 14, scale: 4 }).notNull(),
    durationMonths: integer("duration_months").notNull().default(0),
    holdDays: integer("hold_days").notNull().default(0),
    /** Exact browser origins (scheme://host[:port]) allowed to call the browser routes. */
    allowedOrigins: text("allowed_origins").array().notNull().default(sql`'{}'::text[]`),
    /** The payments provider's connected account that sends this program's events. */
    stripeAccountId: text("stripe_account_id"),
    /** When a flagged commission's hold ends, keep it for review instead of approving it. */
    holdFlaggedCommissions: boolean("hold_flagged_commissions").notNull().default(false),
    /** A payment found by the buyer's email is attributed only to a settled (not provisional) lead. */
    emailAttributionSettledOnly: boolean("email_attribution_settled_only").notNull().default(false),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
    updatedAt: timestamp("updated_at", { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    uniqueIndex(programStripeAccountUniqueIndex).on(t.stripeAccountId),
    /** A workspace's other programs (a customer key known in another program of the brand) without a walk. */
    index("programs_advertiser_idx").on(t.advertiserId),
    check("programs_attribution_window_days_range", sql`${t.attributionWindowDays} between 1 and 365`),
    check("programs_commission_rate_positive", sql`${t.commissionRate} > 0`),
    check("programs_duration_months_nonnegative", sql`${t.durationMonths} >= 0`),
    check("programs_hold_days_nonnegative", sql`${t.holdDays} >= 0`),
  ],
);

/** Per-product commission policy: overrides the program's type and rate for sales of `product_id`. */
export const commissionRules = pgTable(
  "commission_rules",
  {
    id: serial("id").primaryKey(),
    programId: integer("program_id")
      .notNull()
      .references(() => programs.id),
    productId: text("product_id").notNull(),
    commissionType: text("commission_type", { enum: commissionTypes }).notNull(),
    commissionRate: numeric("commission_rate", { precision: 14, scale: 4 }).notNull(),
    durationMonths: integer("duration_months"),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    uniqueIndex("commission_rules_program_product_unique").on(t.programId, t.productId),
    check("commission_rules_rate_positive", sql`${t.commissionRate} > 0`),
  ],
);

/**
 * Program API keys: only the SHA-256 of the key is stored, with a short prefix for display.
 * A key marked for rotation keeps working until `rotate_by`, then answers 401.
 */
export const programApiKeys = pgTable(
  "program_api_keys",
  {
    id: serial("id").primaryKey(),
    programId: integer("program_id")
      .notNull()
      .references(() => programs.id),
    keyHash: text("key_hash").notNull(),
    keyPrefix: text("key_prefix").notNull(),
    /** Shown with the prefix in settings (masked key); null for keys issued before it was kept. */
    keyLast4: text("key_last4"),
    isTest: boolean("is_test").notNull().default(false),
    rotationMarkedAt: timestamp("rotation_marked_at", { withTimezone: true }),
    rotateBy: timestamp("rotate_by", { withTimezone: true }),
    revokedAt: timestamp("revoked_at", { withTimezone: true }),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [uniqueIndex("program_api_keys_hash_unique").on(t.keyHash)],
);
