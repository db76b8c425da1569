import { sql } from "drizzle-orm";
import {
  bigint,
  boolean,
  check,
  index,
  integer,
  pgTable,
  primaryKey,
  text,
  timestamp,
} from "drizzle-orm/pg-core";

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

export const rollupGrains = ["hour", "day", "month"] as const;
export type RollupGrain = (typeof rollupGrains)[number];

/**
 * Pre-aggregated analytics of live (non-test) events: one row per program, dimension, grain (UTC hour, UTC
 * day, UTC month), bucket, dimension value ('' when the event has none: the "(direct)" row) and currency
 * ('' for clicks and leads, which carry no money). Written only by the scheduled rollup job and the rebuild
 * script, never by a tracking request, so no tracking transaction waits on a counter row.
 */
export const analyticsRollups = pgTable(
  "analytics_rollups",
  {
    programId: integer("program_id").notNull(),
    dimension: text("dimension").notNull(),
    grain: text("grain", { enum: rollupGrains }).notNull(),
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
    primaryKey({ columns: [t.programId, t.dimension, t.grain, t.bucketStart, t.value, t.currency] }),
    check("analytics_rollups_grain_valid", sql`${t.grain} in ('hour', 'day', 'month')`),
    index("analytics_rollups_grain_bucket_idx").on(t.grain, t.bucketStart),
  ],
);

/**
 * How far the rollups reach (one row): every hour before `hours_until` has its hourly rows, every day before
 * `days_until` its daily rows, every month before `months_until` its monthly rows. Later events are read raw.
 */
export const analyticsWatermark = pgTable(
  "analytics_watermark",
  {
    id: boolean("id").primaryKey().default(true),
    hoursUntil: timestamp("hours_until", { withTimezone: true }),
    daysUntil: timestamp("days_until", { withTimezone: true }),
    monthsUntil: timestamp("months_until", { withTimezone: true }),
    updatedAt: timestamp("updated_at", { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [check("analytics_watermark_single_row", sql`${t.id}`)],
);
