-- Half-hour rollups: a day in a zone at a half-hour offset (Asia/Kolkata's midnight is 18:30 UTC) starts with
-- one rolled-up piece instead of half an hour of raw events. half_hours_from stays null here: the job's code
-- that writes half hours sets it (to the hours_until it starts from) the first time it rolls a program's hours,
-- so a job of the previous release still running after this migration never leaves a claimed half hour
-- unwritten. A new or rebuilt program has them from its first hour.
ALTER TABLE "analytics_rollups" DROP CONSTRAINT "analytics_rollups_grain_valid";--> statement-breakpoint
ALTER TABLE "analytics_rollups" ADD CONSTRAINT "analytics_rollups_grain_valid" CHECK ("analytics_rollups"."grain" in ('half_hour', 'hour', 'day', 'month', 'day_partial', 'month_partial', 'hour_partial'));--> statement-breakpoint
ALTER TABLE "analytics_rollup_progress" ADD COLUMN "half_hours_from" timestamp with time zone;--> statement-breakpoint
-- The primary key's index carries the measures too, so reading a range of buckets is an index-only scan of
-- consecutive leaf pages instead of one heap page per row (the rows of one bucket lie wherever the job
-- happened to insert them). Same name and key columns as before.
ALTER TABLE "analytics_rollups" DROP CONSTRAINT "analytics_rollups_program_id_dimension_grain_bucket_start_value";--> statement-breakpoint
ALTER TABLE "analytics_rollups" ADD CONSTRAINT "analytics_rollups_program_id_dimension_grain_bucket_start_value" PRIMARY KEY ("program_id", "dimension", "grain", "bucket_start", "value", "currency") INCLUDE ("clicks", "leads", "provisional_leads", "sales", "revenue_cents", "refunds", "refunded_cents", "commission_cents");
