-- The command-line login's sign-in link carries a secret of its own instead of the session's state, which is
-- what the tool polls with: whoever saw the link (a screen share, the browser's history, a log) could poll the
-- login token out before the tool did. Only its SHA-256 is stored; null for sessions started before this.
ALTER TABLE "cli_login_sessions" ADD COLUMN "browser_hash" text;
--> statement-breakpoint
CREATE UNIQUE INDEX "cli_login_sessions_browser_hash_unique" ON "cli_login_sessions" USING btree ("browser_hash");
