CREATE TABLE "payment_aliases" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"program_id" integer NOT NULL,
	"alias" text NOT NULL,
	"payment_id" text NOT NULL,
	"sale_id" bigint,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "stripe_pending_payments" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"program_id" integer NOT NULL,
	"event_id" text NOT NULL,
	"object_id" text NOT NULL,
	"subscription_id" text,
	"provider_customer_id" text,
	"payment" jsonb NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"applied_at" timestamp with time zone,
	"outcome" text
);
--> statement-breakpoint
ALTER TABLE "stripe_events" ADD COLUMN "payload" text;--> statement-breakpoint
ALTER TABLE "payment_aliases" ADD CONSTRAINT "payment_aliases_program_id_programs_id_fk" FOREIGN KEY ("program_id") REFERENCES "public"."programs"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "payment_aliases" ADD CONSTRAINT "payment_aliases_sale_id_affiliate_sale_events_id_fk" FOREIGN KEY ("sale_id") REFERENCES "public"."affiliate_sale_events"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "stripe_pending_payments" ADD CONSTRAINT "stripe_pending_payments_program_id_programs_id_fk" FOREIGN KEY ("program_id") REFERENCES "public"."programs"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "payment_aliases_alias_unique" ON "payment_aliases" USING btree ("alias");--> statement-breakpoint
CREATE INDEX "payment_aliases_sale_idx" ON "payment_aliases" USING btree ("sale_id");--> statement-breakpoint
CREATE INDEX "payment_aliases_unlinked_idx" ON "payment_aliases" USING btree ("payment_id") WHERE "payment_aliases"."sale_id" is null;--> statement-breakpoint
CREATE UNIQUE INDEX "stripe_pending_payments_event_unique" ON "stripe_pending_payments" USING btree ("event_id");--> statement-breakpoint
CREATE INDEX "stripe_pending_payments_open_subscription_idx" ON "stripe_pending_payments" USING btree ("program_id","subscription_id") WHERE "stripe_pending_payments"."applied_at" is null;--> statement-breakpoint
CREATE INDEX "stripe_pending_payments_open_customer_idx" ON "stripe_pending_payments" USING btree ("program_id","provider_customer_id") WHERE "stripe_pending_payments"."applied_at" is null;