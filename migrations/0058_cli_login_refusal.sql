-- Why the last sign-in for a pending command-line login was refused (`email_not_verified`, `account_blocked`):
-- its poll answers that refusal (403, as the callback did) instead of `pending` until the 5 minutes ran out, so
-- the tool stops waiting and says why. Null while nothing was refused, and cleared by a sign-in accepted later.
ALTER TABLE "cli_login_sessions" ADD COLUMN "refusal" text;
