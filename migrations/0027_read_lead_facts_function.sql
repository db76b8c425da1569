-- The lead read's statement as a PL/pgSQL function (lib/db/kept-plan.ts), as 0026 did for the click's:
-- PostgreSQL parses and plans it once per connection instead of on every lead. The TypeScript statement in
-- lib/tracking/lead/lead-store.ts is the source (test/node/kept-plans.test.ts; `npm run db:kept-plans`).
CREATE OR REPLACE FUNCTION read_lead_facts(text, text, text, integer)
RETURNS TABLE (api_key json, click json, customer_by_click json, customer_by_key json, programs json)
LANGUAGE plpgsql AS $kept$
#variable_conflict use_column
BEGIN
  RETURN QUERY
with api_key as (
    select "program_api_keys"."program_id" as program_id, "program_api_keys"."is_test" as is_test, "program_api_keys"."rotation_marked_at" as rotation_marked_at,
           "program_api_keys"."rotate_by" as rotate_by
    from "program_api_keys"
    where "program_api_keys"."key_hash" = $1::text and "program_api_keys"."revoked_at" is null),
    sent_click as (
      select "affiliate_click_events"."click_id" as click_id, "affiliate_click_events"."program_id" as program_id, "affiliate_click_events"."partner_id" as partner_id,
             "affiliate_click_events"."is_test" as is_test, "affiliate_click_events"."created_at" as created_at, "affiliate_click_events"."visitor_click_id" as visitor_click_id
      from "affiliate_click_events"
      where "affiliate_click_events"."click_id" = $2::text
    ),
    click as (
      select coalesce("o"."click_id", s.click_id) as click_id,
             s.program_id,
             coalesce("o"."partner_id", s.partner_id) as partner_id,
             coalesce("o"."created_at", s.created_at) as clicked_at,
             s.is_test
      from sent_click s
      left join "affiliate_click_events" "o" on "o"."click_id" = s.visitor_click_id and "o"."program_id" = s.program_id
    ),
    customer_by_click as (
      select "cu"."id" as id, "cu"."status" as status, "cu"."partner_id" as partner_id, "cu"."click_id" as click_id
      from "customers" "cu"
      join click on "cu"."program_id" = click.program_id and "cu"."click_id" = click.click_id
    ),
    customer_by_key as (
      select "customers"."id" as id, "customers"."status" as status, "customers"."partner_id" as partner_id, "customers"."click_id" as click_id
      from "customers"
      where "customers"."customer_key" = $3::text
        and "customers"."program_id" = coalesce((select program_id from api_key), (select program_id from click))
    ),
    program as (
      select "programs"."id" as id, "programs"."lead_auth_policy" as lead_auth_policy, "programs"."allowed_origins" as allowed_origins
      from "programs"
      where "programs"."id" in ((select program_id from api_key), (select program_id from click), $4::int)
    )
    select
      (select row_to_json(api_key) from api_key) as api_key,
      (select row_to_json(click) from click) as click,
      (select row_to_json(customer_by_click) from customer_by_click) as customer_by_click,
      (select row_to_json(customer_by_key) from customer_by_key) as customer_by_key,
      (select coalesce(json_agg(program), '[]'::json) from program) as programs;
END;
$kept$;
