ALTER TABLE "stripe_events" ADD COLUMN "payload_redacted_at" timestamp with time zone;--> statement-breakpoint
CREATE INDEX "stripe_events_payload_to_redact_idx" ON "stripe_events" USING btree ("completed_at") WHERE "stripe_events"."status" = 'completed' and "stripe_events"."payload" is not null and "stripe_events"."payload_redacted_at" is null;--> statement-breakpoint
CREATE INDEX "stripe_events_payload_to_drop_idx" ON "stripe_events" USING btree ("completed_at") WHERE "stripe_events"."status" = 'completed' and "stripe_events"."payload" is not null;
--> statement-breakpoint
CREATE INDEX "affiliate_lead_events_customer_key_idx" ON "affiliate_lead_events" USING btree ("customer_key") WHERE "affiliate_lead_events"."customer_key" is not null;--> statement-breakpoint
CREATE INDEX "customers_customer_key_idx" ON "customers" USING btree ("customer_key") WHERE "customers"."customer_key" is not null;--> statement-breakpoint
CREATE INDEX "withdrawals_partner_open_idx" ON "withdrawals" USING btree ("program_id","partner_id","currency") WHERE "withdrawals"."status" = 'open';
