import { sql } from "drizzle-orm";
import {
  bigint,
  bigserial,
  boolean,
  index,
  integer,
  jsonb,
  pgTable,
  text,
  timestamp,
  uniqueIndex,
} from "drizzle-orm/pg-core";
import { partners, referralLinks } from "./partners.ts";
import { programs } from "./programs.ts";

/** The one unique index of every id a payment is known by; a conflict on it means "already recorded". */
export const saleIdUniqueIndex = "affiliate_sale_events_namespace_id_unique";

/**
 * One row per click. `click_id` is made in the worker (random, URL-safe) so a click can be answered before
 * its row is durable. When a visitor who already has a click id arrives through another link, the new row
 * records the visitor's original id in `visitor_click_id`.
 */
export const clickEvents = pgTable(
  "affiliate_click_events",
  {
    id: bigserial("id", { mode: "number" }).primaryKey(),
    clickId: text("click_id").notNull(),
    programId: integer("program_id")
      .notNull()
      .references(() => programs.id),
    partnerId: integer("partner_id")
      .notNull()
      .references(() => partners.id),
    linkId: integer("link_id")
      .notNull()
      .references(() => referralLinks.id),
    visitorClickId: text("visitor_click_id"),
    affiliateUrl: text("affiliate_url").notNull(),
    referrer: text("referrer"),
    userAgent: text("user_agent"),
    /** Keyed hashes of the visitor's address and user agent (fraud signals; never the values themselves). */
    ipHash: text("ip_hash"),
    uaHash: text("ua_hash"),
    isTest: boolean("is_test").notNull().default(false),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
    /**
     * Analytics dimensions, derived from the URLs above by the worker that records the click
     * (`lib/analytics/click-dimensions.ts`); generated columns of the database from migration 0010 to 0042.
     */
    referrerDomain: text("referrer_domain"),
    utmSource: text("utm_source"),
    utmMedium: text("utm_medium"),
    utmCampaign: text("utm_campaign"),
    landingPage: text("landing_page"),
    landingOrigin: text("landing_origin"),
  },
  (t) => [
    uniqueIndex("affiliate_click_events_click_id_unique").on(t.clickId),
    index("affiliate_click_events_program_created_idx").on(t.programId, t.createdAt),
    index("affiliate_click_events_created_brin").using("brin", t.createdAt),
    index("affiliate_click_events_program_test_idx").on(t.programId, t.createdAt).where(sql`${t.isTest}`),
  ],
);

/** A signup. Provisional leads (browser mode under `server_required`) settle nothing until confirmed. */
export const leadEvents = pgTable(
  "affiliate_lead_events",
  {
    id: bigserial("id", { mode: "number" }).primaryKey(),
    programId: integer("program_id").references(() => programs.id),
    customerId: bigint("customer_id", { mode: "number" }),
    partnerId: integer("partner_id").references(() => partners.id),
    clickId: text("click_id"),
    customerKey: text("customer_key"),
    emailHash: text("email_hash"),
    emailMasked: text("email_masked"),
    eventName: text("event_name"),
    provisional: boolean("provisional").notNull().default(false),
    settledAt: timestamp("settled_at", { withTimezone: true }),
    /** Sent with the program API key: only such test leads count toward integration verification. */
    viaApiKey: boolean("via_api_key").notNull().default(false),
    /** Keyed hashes of the sender's address and user agent, for browser leads (fraud signals). */
    ipHash: text("ip_hash"),
    uaHash: text("ua_hash"),
    /** Fraud signal codes found for this lead; never blocking by default. */
    fraudFlags: text("fraud_flags").array().notNull().default(sql`'{}'::text[]`),
    /** When the fraud scan (`lib/fraud/`) looked at this lead; null: not yet. */
    fraudScannedAt: timestamp("fraud_scanned_at", { withTimezone: true }),
    isTest: boolean("is_test").notNull().default(false),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    index("affiliate_lead_events_customer_idx").on(t.customerId),
    index("affiliate_lead_events_program_email_idx").on(t.programId, t.emailHash),
    index("affiliate_lead_events_program_created_idx").on(t.programId, t.createdAt),
    index("affiliate_lead_events_created_brin").using("brin", t.createdAt),
    index("affiliate_lead_events_program_test_idx").on(t.programId, t.createdAt).where(sql`${t.isTest}`),
    /** Readiness's latest test leads sent with a key: read newest first, never every test lead of a program. */
    index("affiliate_lead_events_program_key_test_idx")
      .on(t.programId, t.createdAt)
      .where(sql`${t.isTest} and ${t.viaApiKey}`),
    /** A settling lead marks the click's open provisional leads settled: find them without a scan. */
    index("affiliate_lead_events_open_provisional_idx")
      .on(t.programId, t.clickId)
      .where(sql`${t.provisional} and ${t.settledAt} is null`),
    /** The provider's payments name the buyer by `service_customer_key`, in this program or any other. */
    index("affiliate_lead_events_customer_key_idx")
      .on(t.customerKey)
      .where(sql`${t.customerKey} is not null`),
    /** The fraud scan's queue: leads not scanned yet, oldest first. */
    index("affiliate_lead_events_fraud_unscanned_idx").on(t.id).where(sql`${t.fraudScannedAt} is null`),
    /** The device signals look up a program's leads from one address within a window. */
    index("affiliate_lead_events_program_ip_idx")
      .on(t.programId, t.ipHash, t.createdAt)
      .where(sql`${t.ipHash} is not null`),
  ],
);

export const saleSources = ["api", "stripe"] as const;

/**
 * A recorded sale. `processor_event_id` (the `transaction_id`, or the provider's payment id) is unique
 * within its id namespace (`live`, or `test:<program id>` for test sales): the dedupe key shared by the sale
 * endpoint and the provider's events. Every sale's id is also in `payment_aliases`, the one index of all the
 * ids a payment is known by.
 */
export const saleEvents = pgTable(
  "affiliate_sale_events",
  {
    id: bigserial("id", { mode: "number" }).primaryKey(),
    processorEventId: text("processor_event_id").notNull(),
    programId: integer("program_id")
      .notNull()
      .references(() => programs.id),
    customerId: bigint("customer_id", { mode: "number" }),
    partnerId: integer("partner_id").references(() => partners.id),
    amountCents: bigint("amount_cents", { mode: "number" }).notNull(),
    taxCents: bigint("tax_cents", { mode: "number" }),
    currency: text("currency").notNull().default("USD"),
    saleType: text("sale_type").notNull().default("payment"),
    lineItems: jsonb("line_items"),
    isRecurring: boolean("is_recurring").notNull().default(false),
    subscriptionId: text("subscription_id"),
    subscriptionInterval: text("subscription_interval"),
    productId: text("product_id"),
    occurredAt: timestamp("occurred_at", { withTimezone: true }),
    provider: text("provider"),
    providerPaymentId: text("provider_payment_id"),
    livemode: boolean("livemode"),
    source: text("source", { enum: saleSources }).notNull().default("api"),
    /** Cumulative refunded amount, capped at `amount_cents`. */
    refundedCents: bigint("refunded_cents", { mode: "number" }).notNull().default(0),
    /**
     * Set when the sale was stored but its commission could not be written with it (the spec's
     * "Failed to create commission"); the scheduled repair creates the commission and clears it.
     */
    needsCommission: boolean("needs_commission").notNull().default(false),
    /** Fraud signal codes found for this sale; never blocking by default. */
    fraudFlags: text("fraud_flags").array().notNull().default(sql`'{}'::text[]`),
    /** When the fraud scan looked at this sale; null: not yet (a program holding flagged commissions waits). */
    fraudScannedAt: timestamp("fraud_scanned_at", { withTimezone: true }),
    isTest: boolean("is_test").notNull().default(false),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
    /** The id namespace of `processor_event_id` (see `lib/sales/payment-namespace.ts`). */
    idNamespace: text("id_namespace").generatedAlwaysAs(
      sql`CASE WHEN "is_test" THEN 'test:' || "program_id"::text ELSE 'live' END`,
    ),
  },
  (t) => [
    uniqueIndex(saleIdUniqueIndex).on(t.idNamespace, t.processorEventId),
    index("affiliate_sale_events_customer_idx").on(t.customerId),
    index("affiliate_sale_events_program_created_idx").on(t.programId, t.createdAt),
    index("affiliate_sale_events_created_brin").using("brin", t.createdAt),
    index("affiliate_sale_events_program_test_idx").on(t.programId, t.createdAt).where(sql`${t.isTest}`),
    /** The fraud scan's queue: sales not scanned yet, oldest first. */
    index("affiliate_sale_events_fraud_unscanned_idx").on(t.id).where(sql`${t.fraudScannedAt} is null`),
  ],
);
