-- How far each program's analytics rollups reach, one row per program (replaces the single global row of
-- 0010: a program is rolled up, rebuilt or caught up on its own). Written only by the rollup job and the
-- rebuild, under one advisory lock; the tracking paths never touch it.
CREATE TABLE "analytics_rollup_progress" (
	"program_id" integer PRIMARY KEY NOT NULL,
	"hours_until" timestamp with time zone NOT NULL,
	"days_until" timestamp with time zone NOT NULL,
	"months_until" timestamp with time zone NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "analytics_rollup_progress_ordered" CHECK ("analytics_rollup_progress"."months_until" <= "analytics_rollup_progress"."days_until" and "analytics_rollup_progress"."days_until" <= "analytics_rollup_progress"."hours_until")
);
--> statement-breakpoint
ALTER TABLE "analytics_rollup_progress" ADD CONSTRAINT "analytics_rollup_progress_program_id_programs_id_fk" FOREIGN KEY ("program_id") REFERENCES "public"."programs"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
DROP TABLE "analytics_watermark";--> statement-breakpoint
-- Readiness reads a program's latest test leads sent with a key, newest first: with only the index of all test
-- leads, a program with many test leads not sent with a key had every one of them read and sorted.
CREATE INDEX "affiliate_lead_events_program_key_test_idx" ON "affiliate_lead_events" USING btree ("program_id","created_at") WHERE "affiliate_lead_events"."is_test" and "affiliate_lead_events"."via_api_key";
