CREATE TABLE "balance_ledger" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"program_id" integer NOT NULL,
	"partner_id" integer NOT NULL,
	"currency" text NOT NULL,
	"amount_cents" bigint NOT NULL,
	"cause" text NOT NULL,
	"commission_id" bigint,
	"refund_id" bigint,
	"withdrawal_id" integer,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "partner_balances" (
	"program_id" integer NOT NULL,
	"partner_id" integer NOT NULL,
	"currency" text NOT NULL,
	"balance_cents" bigint DEFAULT 0 NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "partner_balances_program_id_partner_id_currency_pk" PRIMARY KEY("program_id","partner_id","currency")
);
--> statement-breakpoint
CREATE TABLE "withdrawals" (
	"id" serial PRIMARY KEY NOT NULL,
	"program_id" integer NOT NULL,
	"partner_id" integer NOT NULL,
	"currency" text NOT NULL,
	"amount_cents" bigint NOT NULL,
	"status" text DEFAULT 'open' NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "withdrawals_amount_nonnegative" CHECK ("withdrawals"."amount_cents" >= 0)
);
--> statement-breakpoint
CREATE TABLE "commissions" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"sale_id" bigint NOT NULL,
	"program_id" integer NOT NULL,
	"partner_id" integer NOT NULL,
	"customer_id" bigint,
	"amount_cents" bigint NOT NULL,
	"deducted_cents" bigint DEFAULT 0 NOT NULL,
	"currency" text NOT NULL,
	"status" text NOT NULL,
	"hold_until" timestamp with time zone,
	"approved_at" timestamp with time zone,
	"credited_at" timestamp with time zone,
	"paid_out_at" timestamp with time zone,
	"needs_manual_review" boolean DEFAULT false NOT NULL,
	"refund_reason" text,
	"version" integer DEFAULT 0 NOT NULL,
	"is_test" boolean DEFAULT false NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "commissions_amount_nonnegative" CHECK ("commissions"."amount_cents" >= 0),
	CONSTRAINT "commissions_deducted_range" CHECK ("commissions"."deducted_cents" between 0 and "commissions"."amount_cents")
);
--> statement-breakpoint
CREATE TABLE "refunds" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"sale_id" bigint NOT NULL,
	"commission_id" bigint,
	"idempotency_key" text NOT NULL,
	"refund_id" text,
	"amount_cents" bigint NOT NULL,
	"refunded_total_cents" bigint NOT NULL,
	"deduction_cents" bigint DEFAULT 0 NOT NULL,
	"reason" text DEFAULT 'refund' NOT NULL,
	"refund_reason" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "customers" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"program_id" integer NOT NULL,
	"partner_id" integer,
	"click_id" text,
	"clicked_at" timestamp with time zone,
	"customer_key" text,
	"status" text DEFAULT 'clicked' NOT NULL,
	"email_hash" text,
	"email_masked" text,
	"provider_customer_id" text,
	"signed_up_at" timestamp with time zone,
	"first_converted_at" timestamp with time zone,
	"first_commission_at" timestamp with time zone,
	"is_test" boolean DEFAULT false NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "affiliate_click_events" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"click_id" text NOT NULL,
	"program_id" integer NOT NULL,
	"partner_id" integer NOT NULL,
	"link_id" integer NOT NULL,
	"visitor_click_id" text,
	"affiliate_url" text NOT NULL,
	"referrer" text,
	"user_agent" text,
	"is_test" boolean DEFAULT false NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "affiliate_lead_events" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"program_id" integer,
	"customer_id" bigint,
	"partner_id" integer,
	"click_id" text,
	"customer_key" text,
	"email_hash" text,
	"email_masked" text,
	"event_name" text,
	"provisional" boolean DEFAULT false NOT NULL,
	"settled_at" timestamp with time zone,
	"via_api_key" boolean DEFAULT false NOT NULL,
	"is_test" boolean DEFAULT false NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "affiliate_sale_events" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"processor_event_id" text NOT NULL,
	"program_id" integer NOT NULL,
	"customer_id" bigint,
	"partner_id" integer,
	"amount_cents" bigint NOT NULL,
	"tax_cents" bigint,
	"currency" text DEFAULT 'USD' NOT NULL,
	"sale_type" text DEFAULT 'payment' NOT NULL,
	"line_items" jsonb,
	"is_recurring" boolean DEFAULT false NOT NULL,
	"subscription_id" text,
	"subscription_interval" text,
	"product_id" text,
	"occurred_at" timestamp with time zone,
	"provider" text,
	"provider_payment_id" text,
	"livemode" boolean,
	"source" text DEFAULT 'api' NOT NULL,
	"refunded_cents" bigint DEFAULT 0 NOT NULL,
	"is_test" boolean DEFAULT false NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "notifications" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"recipient_type" text NOT NULL,
	"recipient_id" integer NOT NULL,
	"program_id" integer,
	"kind" text NOT NULL,
	"payload" jsonb NOT NULL,
	"dedupe_key" text NOT NULL,
	"read_at" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "partners" (
	"id" serial PRIMARY KEY NOT NULL,
	"name" text NOT NULL,
	"email" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "program_partners" (
	"id" serial PRIMARY KEY NOT NULL,
	"program_id" integer NOT NULL,
	"partner_id" integer NOT NULL,
	"status" text DEFAULT 'active' NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "referral_links" (
	"id" serial PRIMARY KEY NOT NULL,
	"program_id" integer,
	"partner_id" integer,
	"short_link" text NOT NULL,
	"is_active" boolean DEFAULT true NOT NULL,
	"disabled_at" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "commission_rules" (
	"id" serial PRIMARY KEY NOT NULL,
	"program_id" integer NOT NULL,
	"product_id" text NOT NULL,
	"commission_type" text NOT NULL,
	"commission_rate" numeric(14, 4) NOT NULL,
	"duration_months" integer,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "commission_rules_rate_positive" CHECK ("commission_rules"."commission_rate" > 0)
);
--> statement-breakpoint
CREATE TABLE "program_api_keys" (
	"id" serial PRIMARY KEY NOT NULL,
	"program_id" integer NOT NULL,
	"key_hash" text NOT NULL,
	"key_prefix" text NOT NULL,
	"is_test" boolean DEFAULT false NOT NULL,
	"rotation_marked_at" timestamp with time zone,
	"rotate_by" timestamp with time zone,
	"revoked_at" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "programs" (
	"id" serial PRIMARY KEY NOT NULL,
	"advertiser_id" integer NOT NULL,
	"name" text NOT NULL,
	"domain" text NOT NULL,
	"attribution_window_days" integer DEFAULT 60 NOT NULL,
	"lead_auth_policy" text DEFAULT 'server_required' NOT NULL,
	"commission_type" text DEFAULT 'percent' NOT NULL,
	"commission_rate" numeric(14, 4) NOT NULL,
	"duration_months" integer DEFAULT 0 NOT NULL,
	"hold_days" integer DEFAULT 0 NOT NULL,
	"allowed_origins" text[] DEFAULT '{}'::text[] NOT NULL,
	"stripe_account_id" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "programs_attribution_window_days_range" CHECK ("programs"."attribution_window_days" between 1 and 365),
	CONSTRAINT "programs_commission_rate_positive" CHECK ("programs"."commission_rate" > 0),
	CONSTRAINT "programs_duration_months_nonnegative" CHECK ("programs"."duration_months" >= 0),
	CONSTRAINT "programs_hold_days_nonnegative" CHECK ("programs"."hold_days" >= 0)
);
--> statement-breakpoint
CREATE TABLE "advertisers" (
	"id" serial PRIMARY KEY NOT NULL,
	"name" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "users" (
	"id" serial PRIMARY KEY NOT NULL,
	"email" text NOT NULL,
	"email_verified" boolean DEFAULT false NOT NULL,
	"blocked_at" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "workspace_members" (
	"id" serial PRIMARY KEY NOT NULL,
	"advertiser_id" integer NOT NULL,
	"user_id" integer NOT NULL,
	"role" text DEFAULT 'member' NOT NULL,
	"status" text DEFAULT 'active' NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "balance_ledger" ADD CONSTRAINT "balance_ledger_commission_id_commissions_id_fk" FOREIGN KEY ("commission_id") REFERENCES "public"."commissions"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "balance_ledger" ADD CONSTRAINT "balance_ledger_refund_id_refunds_id_fk" FOREIGN KEY ("refund_id") REFERENCES "public"."refunds"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "partner_balances" ADD CONSTRAINT "partner_balances_program_id_programs_id_fk" FOREIGN KEY ("program_id") REFERENCES "public"."programs"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "partner_balances" ADD CONSTRAINT "partner_balances_partner_id_partners_id_fk" FOREIGN KEY ("partner_id") REFERENCES "public"."partners"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "withdrawals" ADD CONSTRAINT "withdrawals_program_id_programs_id_fk" FOREIGN KEY ("program_id") REFERENCES "public"."programs"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "withdrawals" ADD CONSTRAINT "withdrawals_partner_id_partners_id_fk" FOREIGN KEY ("partner_id") REFERENCES "public"."partners"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "commissions" ADD CONSTRAINT "commissions_sale_id_affiliate_sale_events_id_fk" FOREIGN KEY ("sale_id") REFERENCES "public"."affiliate_sale_events"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "commissions" ADD CONSTRAINT "commissions_program_id_programs_id_fk" FOREIGN KEY ("program_id") REFERENCES "public"."programs"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "commissions" ADD CONSTRAINT "commissions_partner_id_partners_id_fk" FOREIGN KEY ("partner_id") REFERENCES "public"."partners"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "refunds" ADD CONSTRAINT "refunds_sale_id_affiliate_sale_events_id_fk" FOREIGN KEY ("sale_id") REFERENCES "public"."affiliate_sale_events"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "refunds" ADD CONSTRAINT "refunds_commission_id_commissions_id_fk" FOREIGN KEY ("commission_id") REFERENCES "public"."commissions"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "customers" ADD CONSTRAINT "customers_program_id_programs_id_fk" FOREIGN KEY ("program_id") REFERENCES "public"."programs"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "customers" ADD CONSTRAINT "customers_partner_id_partners_id_fk" FOREIGN KEY ("partner_id") REFERENCES "public"."partners"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "affiliate_click_events" ADD CONSTRAINT "affiliate_click_events_program_id_programs_id_fk" FOREIGN KEY ("program_id") REFERENCES "public"."programs"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "affiliate_click_events" ADD CONSTRAINT "affiliate_click_events_partner_id_partners_id_fk" FOREIGN KEY ("partner_id") REFERENCES "public"."partners"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "affiliate_click_events" ADD CONSTRAINT "affiliate_click_events_link_id_referral_links_id_fk" FOREIGN KEY ("link_id") REFERENCES "public"."referral_links"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "affiliate_lead_events" ADD CONSTRAINT "affiliate_lead_events_program_id_programs_id_fk" FOREIGN KEY ("program_id") REFERENCES "public"."programs"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "affiliate_lead_events" ADD CONSTRAINT "affiliate_lead_events_partner_id_partners_id_fk" FOREIGN KEY ("partner_id") REFERENCES "public"."partners"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "affiliate_sale_events" ADD CONSTRAINT "affiliate_sale_events_program_id_programs_id_fk" FOREIGN KEY ("program_id") REFERENCES "public"."programs"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "affiliate_sale_events" ADD CONSTRAINT "affiliate_sale_events_partner_id_partners_id_fk" FOREIGN KEY ("partner_id") REFERENCES "public"."partners"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "program_partners" ADD CONSTRAINT "program_partners_program_id_programs_id_fk" FOREIGN KEY ("program_id") REFERENCES "public"."programs"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "program_partners" ADD CONSTRAINT "program_partners_partner_id_partners_id_fk" FOREIGN KEY ("partner_id") REFERENCES "public"."partners"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "referral_links" ADD CONSTRAINT "referral_links_program_id_programs_id_fk" FOREIGN KEY ("program_id") REFERENCES "public"."programs"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "referral_links" ADD CONSTRAINT "referral_links_partner_id_partners_id_fk" FOREIGN KEY ("partner_id") REFERENCES "public"."partners"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "commission_rules" ADD CONSTRAINT "commission_rules_program_id_programs_id_fk" FOREIGN KEY ("program_id") REFERENCES "public"."programs"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "program_api_keys" ADD CONSTRAINT "program_api_keys_program_id_programs_id_fk" FOREIGN KEY ("program_id") REFERENCES "public"."programs"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "programs" ADD CONSTRAINT "programs_advertiser_id_advertisers_id_fk" FOREIGN KEY ("advertiser_id") REFERENCES "public"."advertisers"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "workspace_members" ADD CONSTRAINT "workspace_members_advertiser_id_advertisers_id_fk" FOREIGN KEY ("advertiser_id") REFERENCES "public"."advertisers"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "workspace_members" ADD CONSTRAINT "workspace_members_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "balance_ledger_partner_idx" ON "balance_ledger" USING btree ("program_id","partner_id","currency");--> statement-breakpoint
CREATE UNIQUE INDEX "balance_ledger_commission_credit_once" ON "balance_ledger" USING btree ("commission_id") WHERE "balance_ledger"."cause" = 'commission_credit';--> statement-breakpoint
CREATE UNIQUE INDEX "balance_ledger_refund_once" ON "balance_ledger" USING btree ("refund_id") WHERE "balance_ledger"."refund_id" is not null;--> statement-breakpoint
CREATE UNIQUE INDEX "commissions_sale_unique" ON "commissions" USING btree ("sale_id");--> statement-breakpoint
CREATE INDEX "commissions_status_hold_idx" ON "commissions" USING btree ("status","hold_until");--> statement-breakpoint
CREATE INDEX "commissions_partner_idx" ON "commissions" USING btree ("program_id","partner_id");--> statement-breakpoint
CREATE UNIQUE INDEX "refunds_sale_idempotency_unique" ON "refunds" USING btree ("sale_id","idempotency_key");--> statement-breakpoint
CREATE UNIQUE INDEX "customers_program_customer_key_unique" ON "customers" USING btree ("program_id","customer_key");--> statement-breakpoint
CREATE UNIQUE INDEX "customers_program_click_unique" ON "customers" USING btree ("program_id","click_id");--> statement-breakpoint
CREATE INDEX "customers_program_email_idx" ON "customers" USING btree ("program_id","email_hash");--> statement-breakpoint
CREATE INDEX "customers_program_provider_customer_idx" ON "customers" USING btree ("program_id","provider_customer_id");--> statement-breakpoint
CREATE UNIQUE INDEX "affiliate_click_events_click_id_unique" ON "affiliate_click_events" USING btree ("click_id");--> statement-breakpoint
CREATE INDEX "affiliate_click_events_program_created_idx" ON "affiliate_click_events" USING btree ("program_id","created_at");--> statement-breakpoint
CREATE INDEX "affiliate_lead_events_customer_idx" ON "affiliate_lead_events" USING btree ("customer_id");--> statement-breakpoint
CREATE INDEX "affiliate_lead_events_program_email_idx" ON "affiliate_lead_events" USING btree ("program_id","email_hash");--> statement-breakpoint
CREATE UNIQUE INDEX "affiliate_sale_events_processor_event_id_unique" ON "affiliate_sale_events" USING btree ("processor_event_id");--> statement-breakpoint
CREATE INDEX "affiliate_sale_events_customer_idx" ON "affiliate_sale_events" USING btree ("customer_id");--> statement-breakpoint
CREATE INDEX "affiliate_sale_events_program_created_idx" ON "affiliate_sale_events" USING btree ("program_id","created_at");--> statement-breakpoint
CREATE UNIQUE INDEX "notifications_dedupe_key_unique" ON "notifications" USING btree ("dedupe_key");--> statement-breakpoint
CREATE INDEX "notifications_recipient_idx" ON "notifications" USING btree ("recipient_type","recipient_id","created_at");--> statement-breakpoint
CREATE UNIQUE INDEX "partners_email_unique" ON "partners" USING btree (lower("email"));--> statement-breakpoint
CREATE UNIQUE INDEX "program_partners_program_partner_unique" ON "program_partners" USING btree ("program_id","partner_id");--> statement-breakpoint
CREATE UNIQUE INDEX "referral_links_short_link_unique" ON "referral_links" USING btree ("short_link");--> statement-breakpoint
CREATE UNIQUE INDEX "commission_rules_program_product_unique" ON "commission_rules" USING btree ("program_id","product_id");--> statement-breakpoint
CREATE UNIQUE INDEX "program_api_keys_hash_unique" ON "program_api_keys" USING btree ("key_hash");--> statement-breakpoint
CREATE UNIQUE INDEX "programs_stripe_account_unique" ON "programs" USING btree ("stripe_account_id");--> statement-breakpoint
CREATE UNIQUE INDEX "users_email_unique" ON "users" USING btree (lower("email"));--> statement-breakpoint
CREATE UNIQUE INDEX "workspace_members_advertiser_user_unique" ON "workspace_members" USING btree ("advertiser_id","user_id");