import { sql } from "drizzle-orm";
import { boolean, index, integer, pgTable, serial, text, timestamp, uniqueIndex } from "drizzle-orm/pg-core";
import { programs } from "./programs.ts";

/** A partner (affiliate) person or company; may promote several programs. */
export const partners = pgTable(
  "partners",
  {
    id: serial("id").primaryKey(),
    name: text("name").notNull(),
    email: text("email").notNull(),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [uniqueIndex("partners_email_unique").on(sql`lower(${t.email})`)],
);

export const membershipStatuses = ["active", "pending", "removed"] as const;

/** A partner's membership in a program (the partner-program relationship a commission needs). */
export const programPartners = pgTable(
  "program_partners",
  {
    id: serial("id").primaryKey(),
    programId: integer("program_id")
      .notNull()
      .references(() => programs.id),
    partnerId: integer("partner_id")
      .notNull()
      .references(() => partners.id),
    status: text("status", { enum: membershipStatuses }).notNull().default("active"),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [uniqueIndex("program_partners_program_partner_unique").on(t.programId, t.partnerId)],
);

/** A short link code is unique across the service; a clash on insert is told apart by this name. */
export const referralLinkShortLinkUniqueIndex = "referral_links_short_link_unique";

/**
 * A referral link, matched by `short_link` against `aff`/`via`. Codes are unique across the service so a
 * click needs no program to find its link. Partner and program are nullable because a link can be left
 * without them (a removed partner); such a link answers "Invalid referral link configuration".
 */
export const referralLinks = pgTable(
  "referral_links",
  {
    id: serial("id").primaryKey(),
    programId: integer("program_id").references(() => programs.id),
    partnerId: integer("partner_id").references(() => partners.id),
    shortLink: text("short_link").notNull(),
    isActive: boolean("is_active").notNull().default(true),
    disabledAt: timestamp("disabled_at", { withTimezone: true }),
    /**
     * A verification fixture's link (`lib/cli/test-events/synthetic-fixtures.ts`): it takes test clicks only,
     * so no live visitor is attributed to the test chain's partner through it (migration 0057).
     */
    testOnly: boolean("test_only").notNull().default(false),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    uniqueIndex(referralLinkShortLinkUniqueIndex).on(t.shortLink),
    index("referral_links_program_idx").on(t.programId),
  ],
);
