-- Analytics by source and readiness. Click dimensions are derived from the stored URLs by the database at
-- insert (stored generated columns), so the tracking code writes nothing new and the write path is unchanged.
-- Percent-decoding falls back to the raw text on anything that does not decode to UTF-8 (never fails an insert).
CREATE OR REPLACE FUNCTION analytics_url_decode(value text) RETURNS text
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS $$
BEGIN
  IF value !~ '[%+]' THEN
    RETURN value;
  END IF;
  BEGIN
    RETURN convert_from(
      (SELECT string_agg(
                CASE WHEN m[1] ~ '^%[0-9A-Fa-f]{2}$' THEN decode(substr(m[1], 2), 'hex')
                     ELSE convert_to(m[1], 'UTF8') END, ''::bytea ORDER BY n)
         FROM regexp_matches(replace(value, '+', ' '), '%[0-9A-Fa-f]{2}|[^%]+|%', 'g') WITH ORDINALITY AS t(m, n)),
      'UTF8');
  EXCEPTION WHEN OTHERS THEN
    RETURN value;
  END;
END;
$$;
--> statement-breakpoint
-- One query parameter of a URL (the part before any fragment), decoded, trimmed, at most 200 characters; null
-- when absent or empty.
CREATE OR REPLACE FUNCTION analytics_url_param(url text, name text) RETURNS text
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
  SELECT nullif(left(btrim(analytics_url_decode(
    substring(split_part(url, '#', 1) FROM '[?&]' || name || '=([^&]*)'))), 200), '')
$$;
--> statement-breakpoint
-- The host of an absolute URL, lower-cased, without a leading "www."; null for anything else.
CREATE OR REPLACE FUNCTION analytics_url_host(url text) RETURNS text
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
  SELECT nullif(regexp_replace(lower(
    substring(url FROM '^[A-Za-z][A-Za-z0-9+.-]*://(?:[^@/?#]*@)?([^/?#:]+)')), '^www\.', ''), '')
$$;
--> statement-breakpoint
-- host + path of an absolute URL (no query, no fragment), at most 300 characters.
CREATE OR REPLACE FUNCTION analytics_url_page(url text) RETURNS text
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
  SELECT left(analytics_url_host(url) || coalesce(nullif(
    substring(url FROM '^[A-Za-z][A-Za-z0-9+.-]*://[^/?#]*(/[^?#]*)'), ''), '/'), 300)
$$;
--> statement-breakpoint
-- scheme://host[:port] of an absolute URL, lower-cased: the page origin a browser would send.
CREATE OR REPLACE FUNCTION analytics_url_origin(url text) RETURNS text
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
  SELECT lower(substring(url FROM '^([A-Za-z][A-Za-z0-9+.-]*://[^/?#@]+)'))
$$;
--> statement-breakpoint
ALTER TABLE "affiliate_click_events" ADD COLUMN "referrer_domain" text GENERATED ALWAYS AS (analytics_url_host("referrer")) STORED;--> statement-breakpoint
ALTER TABLE "affiliate_click_events" ADD COLUMN "utm_source" text GENERATED ALWAYS AS (analytics_url_param("affiliate_url", 'utm_source')) STORED;--> statement-breakpoint
ALTER TABLE "affiliate_click_events" ADD COLUMN "utm_medium" text GENERATED ALWAYS AS (analytics_url_param("affiliate_url", 'utm_medium')) STORED;--> statement-breakpoint
ALTER TABLE "affiliate_click_events" ADD COLUMN "utm_campaign" text GENERATED ALWAYS AS (analytics_url_param("affiliate_url", 'utm_campaign')) STORED;--> statement-breakpoint
ALTER TABLE "affiliate_click_events" ADD COLUMN "landing_page" text GENERATED ALWAYS AS (analytics_url_page("affiliate_url")) STORED;--> statement-breakpoint
ALTER TABLE "affiliate_click_events" ADD COLUMN "landing_origin" text GENERATED ALWAYS AS (analytics_url_origin("affiliate_url")) STORED;--> statement-breakpoint
CREATE INDEX "affiliate_lead_events_program_created_idx" ON "affiliate_lead_events" USING btree ("program_id","created_at");--> statement-breakpoint
CREATE INDEX "affiliate_lead_events_program_test_idx" ON "affiliate_lead_events" USING btree ("program_id","created_at") WHERE "affiliate_lead_events"."is_test";--> statement-breakpoint
CREATE INDEX "affiliate_sale_events_program_test_idx" ON "affiliate_sale_events" USING btree ("program_id","created_at") WHERE "affiliate_sale_events"."is_test";--> statement-breakpoint
CREATE INDEX "commissions_program_created_idx" ON "commissions" USING btree ("program_id","created_at");--> statement-breakpoint
CREATE INDEX "refunds_created_idx" ON "refunds" USING btree ("created_at");--> statement-breakpoint
CREATE TABLE "analytics_rollups" (
	"program_id" integer NOT NULL,
	"dimension" text NOT NULL,
	"grain" text NOT NULL,
	"bucket_start" timestamp with time zone NOT NULL,
	"value" text NOT NULL,
	"currency" text NOT NULL,
	"clicks" bigint DEFAULT 0 NOT NULL,
	"leads" bigint DEFAULT 0 NOT NULL,
	"provisional_leads" bigint DEFAULT 0 NOT NULL,
	"sales" bigint DEFAULT 0 NOT NULL,
	"revenue_cents" bigint DEFAULT 0 NOT NULL,
	"refunds" bigint DEFAULT 0 NOT NULL,
	"refunded_cents" bigint DEFAULT 0 NOT NULL,
	"commission_cents" bigint DEFAULT 0 NOT NULL,
	CONSTRAINT "analytics_rollups_program_id_dimension_grain_bucket_start_value_currency_pk" PRIMARY KEY("program_id","dimension","grain","bucket_start","value","currency"),
	CONSTRAINT "analytics_rollups_grain_valid" CHECK ("analytics_rollups"."grain" in ('hour', 'day', 'month'))
);
--> statement-breakpoint
-- The rollup job reads one grain's rows of a time range across all programs, and the raw events of the hours
-- it rolls up: BRIN indexes on the append-ordered event times cost next to nothing on the write path.
CREATE INDEX "analytics_rollups_grain_bucket_idx" ON "analytics_rollups" USING btree ("grain","bucket_start");--> statement-breakpoint
CREATE INDEX "affiliate_click_events_created_brin" ON "affiliate_click_events" USING brin ("created_at");--> statement-breakpoint
CREATE INDEX "affiliate_lead_events_created_brin" ON "affiliate_lead_events" USING brin ("created_at");--> statement-breakpoint
CREATE INDEX "affiliate_sale_events_created_brin" ON "affiliate_sale_events" USING brin ("created_at");--> statement-breakpoint
CREATE INDEX "commissions_created_brin" ON "commissions" USING brin ("created_at");--> statement-breakpoint
CREATE TABLE "analytics_watermark" (
	"id" boolean PRIMARY KEY DEFAULT true NOT NULL,
	"hours_until" timestamp with time zone,
	"days_until" timestamp with time zone,
	"months_until" timestamp with time zone,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "analytics_watermark_single_row" CHECK ("analytics_watermark"."id")
);
--> statement-breakpoint
INSERT INTO "analytics_watermark" ("id") VALUES (true) ON CONFLICT DO NOTHING;
