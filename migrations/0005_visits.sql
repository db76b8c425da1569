CREATE TABLE "affiliate_visit_events" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"click_id" text NOT NULL,
	"program_id" integer NOT NULL,
	"partner_id" integer NOT NULL,
	"url" text NOT NULL,
	"referrer" text,
	"is_test" boolean DEFAULT false NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "affiliate_visit_events" ADD CONSTRAINT "affiliate_visit_events_program_id_programs_id_fk" FOREIGN KEY ("program_id") REFERENCES "public"."programs"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "affiliate_visit_events" ADD CONSTRAINT "affiliate_visit_events_partner_id_partners_id_fk" FOREIGN KEY ("partner_id") REFERENCES "public"."partners"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "affiliate_visit_events_click_idx" ON "affiliate_visit_events" USING btree ("click_id");--> statement-breakpoint
CREATE INDEX "affiliate_visit_events_program_created_idx" ON "affiliate_visit_events" USING btree ("program_id","created_at");