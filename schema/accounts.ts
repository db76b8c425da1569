import { sql } from "drizzle-orm";
import {
  check,
  index,
  integer,
  jsonb,
  pgTable,
  serial,
  text,
  timestamp,
  uniqueIndex,
} from "drizzle-orm/pg-core";
import { programs } from "./programs.ts";
import { advertisers, users } from "./workspaces.ts";

/**
 * Dashboard sign-in tokens: only the SHA-256 of the token is stored. The token slides (`expires_at`
 * moves forward on use) but never past `absolute_expires_at`; sign-out sets `revoked_at`.
 */
export const signInTokens = pgTable(
  "sign_in_tokens",
  {
    id: serial("id").primaryKey(),
    userId: integer("user_id")
      .notNull()
      .references(() => users.id),
    tokenHash: text("token_hash").notNull(),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
    lastUsedAt: timestamp("last_used_at", { withTimezone: true }).notNull().defaultNow(),
    expiresAt: timestamp("expires_at", { withTimezone: true }).notNull(),
    absoluteExpiresAt: timestamp("absolute_expires_at", { withTimezone: true }).notNull(),
    revokedAt: timestamp("revoked_at", { withTimezone: true }),
  },
  (t) => [
    uniqueIndex("sign_in_tokens_hash_unique").on(t.tokenHash),
    index("sign_in_tokens_user_idx").on(t.userId),
  ],
);

export const oauthStatePurposes = ["sign_in", "stripe_connect"] as const;

/**
 * A redirect-based flow in progress (OpenID sign-in, the payments provider's Connect OAuth): found by the
 * SHA-256 of its `state`, used once, short-lived. Holds what the callback needs (nonce, PKCE verifier).
 */
export const oauthStates = pgTable(
  "oauth_states",
  {
    id: serial("id").primaryKey(),
    stateHash: text("state_hash").notNull(),
    purpose: text("purpose", { enum: oauthStatePurposes }).notNull(),
    nonce: text("nonce"),
    codeVerifier: text("code_verifier"),
    userId: integer("user_id").references(() => users.id),
    programId: integer("program_id").references(() => programs.id),
    expiresAt: timestamp("expires_at", { withTimezone: true }).notNull(),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    uniqueIndex("oauth_states_state_hash_unique").on(t.stateHash),
    check("oauth_states_purpose_valid", sql`${t.purpose} in ('sign_in', 'stripe_connect')`),
  ],
);

/** Who changed what in a workspace, when: `changes` maps each field to `{from, to}` (secrets never). */
export const auditLog = pgTable(
  "audit_log",
  {
    id: serial("id").primaryKey(),
    advertiserId: integer("advertiser_id")
      .notNull()
      .references(() => advertisers.id),
    programId: integer("program_id").references(() => programs.id),
    actorUserId: integer("actor_user_id").references(() => users.id),
    action: text("action").notNull(),
    changes: jsonb("changes").notNull().default(sql`'{}'::jsonb`),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [index("audit_log_program_created_idx").on(t.programId, t.createdAt)],
);
