-- The click's statement as a PL/pgSQL function (lib/db/kept-plan.ts): PostgreSQL parses and plans it once per
-- connection instead of on every click. Statements sent over HTTP are never prepared, and parsing and planning
-- were most of the database's CPU per click. The TypeScript statement in lib/tracking/click/click-store.ts is
-- the source: test/node/kept-plans.test.ts fails when this definition and it differ, and
-- `npm run db:kept-plans` prints the definition for a new migration.
CREATE OR REPLACE FUNCTION record_click(text, text, timestamp with time zone, text, boolean, text, text, text, text, text, text, integer, boolean, integer)
RETURNS TABLE (link json, requested_program_exists boolean, key_program_id integer, retained_click_id text, recorded boolean)
LANGUAGE plpgsql AS $kept$
#variable_conflict use_column
BEGIN
  RETURN QUERY
with link as (
      select "l"."id" as id, "l"."program_id" as program_id, "l"."partner_id" as partner_id, "l"."is_active" as is_active,
             "p"."id" is not null as program_exists, "p"."attribution_window_days" as attribution_window_days,
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
      select "v"."click_id" as click_id
      from "affiliate_click_events" "v"
      join link on "v"."program_id" = link.program_id
      where "v"."click_id" = $4::text
        and "v"."is_test" = $5::boolean
        and "v"."created_at" > $3::timestamptz - make_interval(days => link.attribution_window_days)
    ),
    recorded as (
      insert into "affiliate_click_events"
        ("click_id", "program_id", "partner_id", "link_id",
         "visitor_click_id", "affiliate_url", "referrer",
         "user_agent", "ip_hash", "ua_hash", "is_test",
         "created_at")
      select $6, link.program_id, link.partner_id, link.id, (select click_id from retained),
             $7, $8::text, $9::text, $10::text,
             $11::text, $5::boolean, $3::timestamptz
      from link
      where link.is_active
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
