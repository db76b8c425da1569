-- The hour under way: the every-minute rollup job sums [tail_from, tail_until) (tail_from is hours_until, the
-- hour not yet rolled up; tail_until a whole minute that ended two minutes ago) into `hour_partial` rows keyed
-- by tail_until, from the previous set and the raw events since. A range ending now then reads a couple of
-- minutes raw instead of up to an hour, however many events an hour holds.
ALTER TABLE "analytics_rollups" DROP CONSTRAINT "analytics_rollups_grain_valid";--> statement-breakpoint
ALTER TABLE "analytics_rollups" ADD CONSTRAINT "analytics_rollups_grain_valid" CHECK ("analytics_rollups"."grain" in ('hour', 'day', 'month', 'day_partial', 'month_partial', 'hour_partial'));--> statement-breakpoint
ALTER TABLE "analytics_rollup_progress" ADD COLUMN "tail_from" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "analytics_rollup_progress" ADD COLUMN "tail_until" timestamp with time zone;
