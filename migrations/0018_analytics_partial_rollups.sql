-- Partial rollups: the rows of the day and of the month that are under way, summed by the rollup job from the
-- hourly and daily rows it has, so a range ending now reads one bucket for today and one for this month
-- instead of up to 23 hourly and 30 daily buckets. Keyed by the `hours_until` they were summed at;
-- `partials_until` says which set is complete.
ALTER TABLE "analytics_rollups" DROP CONSTRAINT "analytics_rollups_grain_valid";--> statement-breakpoint
ALTER TABLE "analytics_rollups" ADD CONSTRAINT "analytics_rollups_grain_valid" CHECK ("analytics_rollups"."grain" in ('hour', 'day', 'month', 'day_partial', 'month_partial'));--> statement-breakpoint
ALTER TABLE "analytics_rollup_progress" ADD COLUMN "partials_until" timestamp with time zone;
