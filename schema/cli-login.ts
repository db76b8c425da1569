import { sql } from "drizzle-orm";
import { check, index, integer, pgTable, serial, text, timestamp, uniqueIndex } from "drizzle-orm/pg-core";
import { programs } from "./programs.ts";
import { users } from "./workspaces.ts";

export const cliLoginStatuses = ["pending", "completed", "consumed"] as const;
export type CliLoginStatus = (typeof cliLoginStatuses)[number];

/** A second login session completed with the same ID token runs into this index. */
export const cliLoginSessionIdTokenUniqueIndex = "cli_login_sessions_id_token_unique";

/** The refusals of a person at sign-in (`PersonRefusal` of `lib/identity/identity-errors.ts`). */
export const cliLoginRefusals = ["email_not_verified", "account_blocked"] as const;

/**
 * A command-line login session: `auth/start` creates it (pending, 5 minutes), `auth/callback` binds the
 * signed-in person (completed), the first `auth/poll` after that issues the login token (consumed). Only the
 * SHA-256 of the random `state` is stored: whoever holds the state can collect the token.
 */
export const cliLoginSessions = pgTable(
  "cli_login_sessions",
  {
    id: serial("id").primaryKey(),
    stateHash: text("state_hash").notNull(),
    /** The short code the tool prints beside the URL, so a person can tell the page is theirs. */
    userCode: text("user_code").notNull(),
    status: text("status", { enum: cliLoginStatuses }).notNull().default("pending"),
    userId: integer("user_id").references(() => users.id),
    expiresAt: timestamp("expires_at", { withTimezone: true }).notNull(),
    completedAt: timestamp("completed_at", { withTimezone: true }),
    consumedAt: timestamp("consumed_at", { withTimezone: true }),
    /**
     * Why a sign-in for this session was refused (a suspended account, an unverified provider email), which
     * ends it: its poll answers the same 403, so the tool stops waiting and says why, and no later sign-in
     * completes it (migration 0058).
     */
    refusal: text("refusal", { enum: cliLoginRefusals }),
    /**
     * The SHA-256 of the ID token `auth/callback` completed the session with: unique, so one ID token signs in
     * one login session, not every session whose state its holder learns (migration 0058).
     */
    idTokenHash: text("id_token_hash"),
    /**
     * The SHA-256 of the secret the sign-in link (`verification_url`) carries instead of the state: whoever
     * sees the link (a screen share, the browser's history) can open it, but cannot poll for the token
     * (migration 0060). Null for sessions started before it, whose links carried the state.
     */
    browserHash: text("browser_hash"),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    uniqueIndex("cli_login_sessions_state_hash_unique").on(t.stateHash),
    uniqueIndex(cliLoginSessionIdTokenUniqueIndex).on(t.idTokenHash),
    uniqueIndex("cli_login_sessions_browser_hash_unique").on(t.browserHash),
    check("cli_login_sessions_completed_has_user", sql`${t.status} = 'pending' or ${t.userId} is not null`),
  ],
);

/** One command-line token per login session: a second poll issuing one runs into this index. */
export const cliLoginTokenSessionUniqueIndex = "cli_login_tokens_session_unique";

/**
 * Command-line login tokens (`atl_` + 256 random bits): per person, stored only as SHA-256 with a short
 * display prefix, valid until `expires_at` unless revoked (logout) first.
 */
export const cliLoginTokens = pgTable(
  "cli_login_tokens",
  {
    id: serial("id").primaryKey(),
    userId: integer("user_id")
      .notNull()
      .references(() => users.id),
    tokenHash: text("token_hash").notNull(),
    tokenPrefix: text("token_prefix").notNull(),
    sessionId: integer("session_id").references(() => cliLoginSessions.id),
    expiresAt: timestamp("expires_at", { withTimezone: true }).notNull(),
    revokedAt: timestamp("revoked_at", { withTimezone: true }),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    uniqueIndex("cli_login_tokens_token_hash_unique").on(t.tokenHash),
    uniqueIndex(cliLoginTokenSessionUniqueIndex).on(t.sessionId),
  ],
);

/** One row per synthetic click -> lead -> sale chain, for the cap of 10 per program per hour. */
export const cliSyntheticChains = pgTable(
  "cli_synthetic_chains",
  {
    id: serial("id").primaryKey(),
    programId: integer("program_id")
      .notNull()
      .references(() => programs.id),
    startedAt: timestamp("started_at", { withTimezone: true }).notNull(),
  },
  (t) => [index("cli_synthetic_chains_program_started_idx").on(t.programId, t.startedAt)],
);
