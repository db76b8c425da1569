import { bigserial, boolean, index, integer, pgTable, text, timestamp } from "drizzle-orm/pg-core";
import { partners } from "./partners.ts";
import { programs } from "./programs.ts";

/**
 * A page view of a visitor who holds a click id (the browser tracker sends one per page view that is not
 * itself a partner landing: the click records that one). Stored under the visitor's original click and its
 * partner (first click). No foreign key to the click row: a visit is only accepted for a known click (the
 * insert selects it), and clicks may later be written off the response path.
 */
export const visitEvents = pgTable(
  "affiliate_visit_events",
  {
    id: bigserial("id", { mode: "number" }).primaryKey(),
    clickId: text("click_id").notNull(),
    programId: integer("program_id")
      .notNull()
      .references(() => programs.id),
    partnerId: integer("partner_id")
      .notNull()
      .references(() => partners.id),
    url: text("url").notNull(),
    referrer: text("referrer"),
    isTest: boolean("is_test").notNull().default(false),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    index("affiliate_visit_events_click_idx").on(t.clickId),
    index("affiliate_visit_events_program_created_idx").on(t.programId, t.createdAt),
  ],
);
