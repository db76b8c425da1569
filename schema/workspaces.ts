import { sql } from "drizzle-orm";
import { boolean, integer, pgTable, serial, text, timestamp, uniqueIndex } from "drizzle-orm/pg-core";

/** An advertiser (brand) workspace: owns programs; people reach it through memberships. */
export const advertisers = pgTable("advertisers", {
  id: serial("id").primaryKey(),
  name: text("name").notNull(),
  createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
});

/** One account per email, case-insensitive: two first sign-ins of one email race on this index. */
export const userEmailUniqueIndex = "users_email_unique";

/** A signed-in person (dashboard or command-line login). */
export const users = pgTable(
  "users",
  {
    id: serial("id").primaryKey(),
    email: text("email").notNull(),
    emailVerified: boolean("email_verified").notNull().default(false),
    blockedAt: timestamp("blocked_at", { withTimezone: true }),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [uniqueIndex(userEmailUniqueIndex).on(sql`lower(${t.email})`)],
);

export const memberRoles = ["owner", "admin", "member"] as const;
export const memberStatuses = ["active", "invited", "removed"] as const;

/** Workspace membership; dashboard routes require an active one on the program's advertiser. */
export const workspaceMembers = pgTable(
  "workspace_members",
  {
    id: serial("id").primaryKey(),
    advertiserId: integer("advertiser_id")
      .notNull()
      .references(() => advertisers.id),
    userId: integer("user_id")
      .notNull()
      .references(() => users.id),
    role: text("role", { enum: memberRoles }).notNull().default("member"),
    status: text("status", { enum: memberStatuses }).notNull().default("active"),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [uniqueIndex("workspace_members_advertiser_user_unique").on(t.advertiserId, t.userId)],
);
