import { sql } from "drizzle-orm";
import { bigint, check, index, integer, pgTable, primaryKey, text, timestamp } from "drizzle-orm/pg-core";
import { programs } from "./programs.ts";

export const analyticsDimensions = [
  "partner",
  "link",
  "referrer_domain",
  "utm_source",
  "utm_medium",
  "utm_campaign",
  "landing_page",
] as const;
export type AnalyticsDimension = (typeof analyticsDimensions)[number];

/**
 * UTC half hours (migration 0024), hours, days and months. Half hours exist so a day in a zone at a half-hour
 * offset (Asia/Kolkata's midnight is 18:30 UTC) starts with one rolled-up piece instead of half an hour of raw
 * events; they are summed in the same statement as the hours, from the same facts.
 */
export const rollupGrains = ["half_hour", "hour", "day", "month"] as const;
export type RollupGrain = (typeof rollupGrains)[number];

/**
 * The day and the month under way (migration 0018), summed by the rollup job at each `hours_until` and keyed
 * by it (`bucket_start` is that `hours_until`, the END of what they cover): `day_partial` covers
 * [`days_until`, `hours_until`) from the hourly rows, `month_partial` [`months_until`, `days_until`) from the
 * daily rows. A new set is written as `hours_until` moves; the sets of the last two hours are kept, so a
 * reader that read the progress a moment before still finds its set.
 */
export const partialGrains = ["day_partial", "month_partial"] as const;
export type PartialGrain = (typeof partialGrains)[number];

/**
 * The hour under way (migration 0023): [`tail_from`, `tail_until`) summed by the every-minute job from the
 * previous set and the raw events since, keyed by `tail_until` (the END of what it covers, a whole minute
 * that ended two minutes ago). It is valid while `tail_from` equals `hours_until`; a range ending now then
 * reads the last couple of minutes raw instead of up to an hour. Sets older than ten minutes are deleted.
 */
export const tailGrain = "hour_partial";

/**
 * Pre-aggregated analytics of live (non-test) events: one row per program, dimension, grain (UTC half hour,
 * hour, day, month), bucket, dimension value ('' when the event has none: the "(direct)" row) and currency
 * ('' for clicks and leads, which carry no money). Written only by the scheduled rollup job and the rebuild
 * script, never by a tracking request, so no tracking transaction waits on a counter row.
 */
export const analyticsRollups = pgTable(
  "analytics_rollups",
  {
    programId: integer("program_id").notNull(),
    dimension: text("dimension").notNull(),
    grain: text("grain", { enum: [...rollupGrains, ...partialGrains, tailGrain] }).notNull(),
    bucketStart: timestamp("bucket_start", { withTimezone: true }).notNull(),
    value: text("value").notNull(),
    currency: text("currency").notNull(),
    clicks: bigint("clicks", { mode: "number" }).notNull().default(0),
    leads: bigint("leads", { mode: "number" }).notNull().default(0),
    provisionalLeads: bigint("provisional_leads", { mode: "number" }).notNull().default(0),
    sales: bigint("sales", { mode: "number" }).notNull().default(0),
    revenueCents: bigint("revenue_cents", { mode: "number" }).notNull().default(0),
    refunds: bigint("refunds", { mode: "number" }).notNull().default(0),
    refundedCents: bigint("refunded_cents", { mode: "number" }).notNull().default(0),
    commissionCents: bigint("commission_cents", { mode: "number" }).notNull().default(0),
  },
  (t) => [
    // The primary key's index also carries the measures (migration 0024, `include (...)`, which drizzle's
    // schema cannot say): a read of a range of buckets is an index-only scan of consecutive leaf pages, not a
    // heap page per row, so its cost grows with the rows it returns and not with where they lie in the table.
    primaryKey({ columns: [t.programId, t.dimension, t.grain, t.bucketStart, t.value, t.currency] }),
    check(
      "analytics_rollups_grain_valid",
      sql`${t.grain} in ('half_hour', 'hour', 'day', 'month', 'day_partial', 'month_partial', 'hour_partial')`,
    ),
    index("analytics_rollups_grain_bucket_idx").on(t.grain, t.bucketStart),
  ],
);

/**
 * How far one program's rollups reach: every event of the program before `hours_until` is in its hourly
 * rows, before `days_until` in its daily rows, before `months_until` in its monthly rows (each a UTC
 * boundary). Later events are read raw. No row: nothing rolled up yet, everything is read raw.
 */
export const analyticsRollupProgress = pgTable(
  "analytics_rollup_progress",
  {
    programId: integer("program_id")
      .primaryKey()
      .references(() => programs.id),
    hoursUntil: timestamp("hours_until", { withTimezone: true }).notNull(),
    daysUntil: timestamp("days_until", { withTimezone: true }).notNull(),
    monthsUntil: timestamp("months_until", { withTimezone: true }).notNull(),
    /**
     * Half-hour rows exist for [`half_hours_from`, `hours_until`); null: none. A program rolled up before
     * migration 0024 has them from the first hour the job rolled after it, a new or rebuilt one from its
     * first hour.
     */
    halfHoursFrom: timestamp("half_hours_from", { withTimezone: true }),
    /** The `hours_until` whose partial rows (`day_partial`, `month_partial`) are written; null: none yet. */
    partialsUntil: timestamp("partials_until", { withTimezone: true }),
    /** The `hours_until` the written `hour_partial` set starts at; null: none yet. */
    tailFrom: timestamp("tail_from", { withTimezone: true }),
    /** The end of the written `hour_partial` set, and its key; null: none yet. */
    tailUntil: timestamp("tail_until", { withTimezone: true }),
    updatedAt: timestamp("updated_at", { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    check(
      "analytics_rollup_progress_ordered",
      sql`${t.monthsUntil} <= ${t.daysUntil} and ${t.daysUntil} <= ${t.hoursUntil}`,
    ),
  ],
);
