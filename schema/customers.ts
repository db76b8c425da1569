import { sql } from "drizzle-orm";
import {
  bigint,
  bigserial,
  boolean,
  index,
  integer,
  pgTable,
  primaryKey,
  text,
  timestamp,
  uniqueIndex,
} from "drizzle-orm/pg-core";
import { partners } from "./partners.ts";
import { programs } from "./programs.ts";

export const customerStatuses = ["clicked", "lead", "converted"] as const;
export type CustomerStatus = (typeof customerStatuses)[number];

/**
 * A customer of one program, bound once to the partner of its first click (first-click attribution).
 * `customer_key` is the brand's own id, saved only when a lead settles.
 */
/** Names of the unique indexes a concurrent lead of the same customer runs into (then re-reads). */
export const customerKeyUniqueIndex = "customers_program_customer_key_unique";
export const customerClickUniqueIndex = "customers_program_click_unique";

export const customers = pgTable(
  "customers",
  {
    id: bigserial("id", { mode: "number" }).primaryKey(),
    programId: integer("program_id")
      .notNull()
      .references(() => programs.id),
    partnerId: integer("partner_id").references(() => partners.id),
    clickId: text("click_id"),
    clickedAt: timestamp("clicked_at", { withTimezone: true }),
    customerKey: text("customer_key"),
    status: text("status", { enum: customerStatuses }).notNull().default("clicked"),
    emailHash: text("email_hash"),
    emailMasked: text("email_masked"),
    /** The first provider customer id the customer paid under; every one it paid under is in `customer_provider_ids`. */
    providerCustomerId: text("provider_customer_id"),
    signedUpAt: timestamp("signed_up_at", { withTimezone: true }),
    firstConvertedAt: timestamp("first_converted_at", { withTimezone: true }),
    firstCommissionAt: timestamp("first_commission_at", { withTimezone: true }),
    isTest: boolean("is_test").notNull().default(false),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
    updatedAt: timestamp("updated_at", { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    uniqueIndex(customerKeyUniqueIndex).on(t.programId, t.customerKey),
    uniqueIndex(customerClickUniqueIndex).on(t.programId, t.clickId),
    // Partial: a lookup names the email or the provider's id, and an index holding every customer under its
    // program would also serve a walk of the program, which a kept plan made on small tables picked for a
    // lookup by click (migration 0046).
    index("customers_program_email_idx").on(t.programId, t.emailHash).where(sql`${t.emailHash} is not null`),
    index("customers_program_provider_customer_idx")
      .on(t.programId, t.providerCustomerId)
      .where(sql`${t.providerCustomerId} is not null`),
    /** A customer key known in another program (the provider path's mismatch check) without a scan. */
    index("customers_customer_key_idx").on(t.customerKey).where(sql`${t.customerKey} is not null`),
  ],
);

/**
 * Every provider customer id a customer of the program has paid or subscribed under, each bound to the first
 * customer that used it (migration 0056). A buyer can have several: a one-time payment under one, a subscription
 * bought later under another, whose renewals carry neither metadata nor always an email; the spec matches
 * each renewal by the id saved when its subscription's first payment was attributed, so every such id is kept,
 * not only the customer's first (`customers.provider_customer_id`).
 */
export const customerProviderIds = pgTable(
  "customer_provider_ids",
  {
    programId: integer("program_id")
      .notNull()
      .references(() => programs.id),
    providerCustomerId: text("provider_customer_id").notNull(),
    customerId: bigint("customer_id", { mode: "number" })
      .notNull()
      .references(() => customers.id, { onDelete: "cascade" }),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
  },
  // No index on customer_id: only a customer's deletion would look its ids up that way, and none is deleted.
  (t) => [primaryKey({ columns: [t.programId, t.providerCustomerId] })],
);
