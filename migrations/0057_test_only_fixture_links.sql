-- The test chain's referral link (`synthetic-verify-p<program>`, lib/cli/test-events/synthetic-fixtures.ts) takes
-- test clicks only. It was an ordinary active link of a partner who is an active member of the program, with a
-- code anyone could guess, so a live click on it was recorded and a sale on that click paid the fixture partner
-- a real commission and balance. The click statement now refuses a live click on a `test_only` link as it
-- refuses an unknown code (400 `Referral link not found`); its parameters and result columns are unchanged (the
-- link's JSON gains `test_only`), so workers deployed before this migration run on it.
ALTER TABLE "referral_links" ADD COLUMN "test_only" boolean DEFAULT false NOT NULL;
--> statement-breakpoint
-- The fixture links made so far: the code the chain gives its link, of the partner it makes for it.
UPDATE "referral_links" SET "test_only" = true
WHERE "short_link" = 'synthetic-verify-p' || "program_id"
  AND "partner_id" IN (
    SELECT "id" FROM "partners"
    WHERE lower("email") = 'synthetic-verification+p' || "referral_links"."program_id" || '@fixtures.invalid');
--> statement-breakpoint
CREATE OR REPLACE FUNCTION record_click_with_dimensions(text, text, timestamp with time zone, text, boolean, text, text, text, text, text, text, integer, boolean, integer, text, text, text, text, text, text)
RETURNS TABLE (link json, requested_program_exists boolean, key_program_id integer, retained_click_id text, recorded boolean)
LANGUAGE plpgsql SET plan_cache_mode = force_generic_plan SET enable_seqscan = off AS $kept$
#variable_conflict use_column
BEGIN
  RETURN QUERY
with link as (
      select "l"."id" as id, "l"."program_id" as program_id, "l"."partner_id" as partner_id, "l"."is_active" as is_active,
             "l"."test_only" as test_only, "p"."id" is not null as program_exists, "p"."attribution_window_days" as attribution_window_days,
             "p"."allowed_origins" as allowed_origins
      from "referral_links" "l"
      left join "programs" "p" on "p"."id" = "l"."program_id"
      where "l"."short_link" = $1
    ),
    api_key as (
      select "program_api_keys"."program_id" as program_id from "program_api_keys"
      where "program_api_keys"."key_hash" = $2::text and "program_api_keys"."revoked_at" is null
        and ("program_api_keys"."rotate_by" is null or "program_api_keys"."rotate_by" > $3::timestamptz)
    ),
    retained as (
      select "r"."click_id" as click_id
      from "affiliate_click_events" "v"
      join link on "v"."program_id" = link.program_id
      join "affiliate_click_events" "r" on "r"."click_id" = coalesce("v"."visitor_click_id", "v"."click_id")
      where "v"."click_id" = $4::text
        and "v"."is_test" = $5::boolean
        and "r"."created_at" > $3::timestamptz - make_interval(days => link.attribution_window_days)
    ),
    recorded as (
      insert into "affiliate_click_events"
        ("click_id", "program_id", "partner_id", "link_id",
         "visitor_click_id", "affiliate_url", "referrer",
         "user_agent", "ip_hash", "ua_hash", "is_test",
         "created_at", "referrer_domain", "utm_source", "utm_medium", "utm_campaign", "landing_page", "landing_origin")
      select $6, link.program_id, link.partner_id, link.id, (select click_id from retained),
             $7, $8::text, $9::text, $10::text,
             $11::text, $5::boolean, $3::timestamptz,
             $15::text, $16::text, $17::text, $18::text,
             $19::text, $20::text
      from link
      where link.is_active
        and ($5::boolean or not link.test_only)
        and link.partner_id is not null
        and link.program_exists
        and ($12::int is null or link.program_id = $12::int)
        and (not $13::boolean
             or not exists (select 1 from api_key where program_id <> $14::int))
      returning "affiliate_click_events"."click_id"
    )
    select
      (select row_to_json(link) from link) as link,
      case when $12::int is null then null
           else exists (select 1 from "programs" where "programs"."id" = $12::int) end
        as requested_program_exists,
      (select program_id from api_key) as key_program_id,
      (select click_id from retained) as retained_click_id,
      exists (select 1 from recorded) as recorded;
END;
$kept$;
