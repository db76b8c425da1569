CREATE TABLE "stripe_events" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"event_id" text NOT NULL,
	"type" text NOT NULL,
	"account_id" text,
	"program_id" integer,
	"livemode" boolean,
	"status" text NOT NULL,
	"attempts" integer DEFAULT 1 NOT NULL,
	"claimed_at" timestamp with time zone NOT NULL,
	"completed_at" timestamp with time zone,
	"outcome" text,
	"last_error" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "stripe_events_status_valid" CHECK ("stripe_events"."status" in ('claimed', 'completed', 'failed'))
);
--> statement-breakpoint
CREATE TABLE "stripe_pending_reversals" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"program_id" integer NOT NULL,
	"payment_id" text NOT NULL,
	"event_id" text NOT NULL,
	"kind" text NOT NULL,
	"reversal_id" text NOT NULL,
	"charge_amount_cents" bigint NOT NULL,
	"refunded_total_cents" bigint NOT NULL,
	"reason" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"applied_at" timestamp with time zone
);
--> statement-breakpoint
ALTER TABLE "stripe_events" ADD CONSTRAINT "stripe_events_program_id_programs_id_fk" FOREIGN KEY ("program_id") REFERENCES "public"."programs"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "stripe_pending_reversals" ADD CONSTRAINT "stripe_pending_reversals_program_id_programs_id_fk" FOREIGN KEY ("program_id") REFERENCES "public"."programs"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "stripe_events_event_id_unique" ON "stripe_events" USING btree ("event_id");--> statement-breakpoint
CREATE UNIQUE INDEX "stripe_pending_reversals_event_unique" ON "stripe_pending_reversals" USING btree ("event_id");--> statement-breakpoint
CREATE INDEX "stripe_pending_reversals_open_idx" ON "stripe_pending_reversals" USING btree ("program_id","payment_id") WHERE "stripe_pending_reversals"."applied_at" is null;