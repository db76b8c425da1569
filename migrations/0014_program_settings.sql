ALTER TABLE "program_api_keys" ADD COLUMN "key_last4" text;--> statement-breakpoint
CREATE INDEX "referral_links_program_idx" ON "referral_links" USING btree ("program_id");
