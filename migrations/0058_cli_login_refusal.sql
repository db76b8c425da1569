-- Why the last sign-in for a pending command-line login was refused (`email_not_verified`, `account_blocked`):
-- its poll answers that refusal (403, as the callback did) instead of `pending` until the 5 minutes ran out, so
-- the tool stops waiting and says why; a refused session is over (no later sign-in completes it, as the tool
-- stopped polling). Null while nothing was refused.
ALTER TABLE "cli_login_sessions" ADD COLUMN "refusal" text;
--> statement-breakpoint
-- The SHA-256 of the ID token `auth/callback` completed a session with, unique: one ID token signs in one
-- command-line login session (it completed any number before, one per state its holder knew).
ALTER TABLE "cli_login_sessions" ADD COLUMN "id_token_hash" text;
--> statement-breakpoint
CREATE UNIQUE INDEX "cli_login_sessions_id_token_unique" ON "cli_login_sessions" USING btree ("id_token_hash");
