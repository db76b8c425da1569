-- The sale's read also says whether the customer's row holds a provider customer id and an email
-- (`has_provider_customer_id`, `has_email` in each customer's JSON), so that a sale whose customer row already holds
-- all the sale would write (converted, first commission dated, and a provider id and an email wherever the call
-- brings one) leaves the row alone instead of rewriting it to change only `updated_at` (lib/tracking/sale/decide-sale.ts,
-- `unchanged`). Parameters and result columns are unchanged: a worker deployed before this migration reads the
-- two keys as absent and writes the row as before.
CREATE OR REPLACE FUNCTION read_sale_facts(text, text, text, text, text)
RETURNS TABLE (key json, program json, recorded_sales json, customer_by_key json, click json)
LANGUAGE plpgsql SET plan_cache_mode = force_generic_plan SET enable_seqscan = off AS $kept$
#variable_conflict use_column
BEGIN
  RETURN QUERY
select
      (select row_to_json(part) from (
    select "program_api_keys"."program_id" as program_id, "program_api_keys"."is_test" as is_test, "program_api_keys"."rotation_marked_at" as rotation_marked_at,
           "program_api_keys"."rotate_by" as rotate_by
    from "program_api_keys"
    where "program_api_keys"."key_hash" = $1::text and "program_api_keys"."revoked_at" is null) part) as key,
      (select row_to_json(part) from (
      select "p"."id" as id, "p"."attribution_window_days" as attribution_window_days,
             "p"."commission_type" as commission_type, "p"."commission_rate"::text as commission_rate,
             "p"."duration_months" as duration_months, "p"."hold_days" as hold_days,
             "r"."commission_type" as rule_type, "r"."commission_rate"::text as rule_rate,
             "r"."duration_months" as rule_duration, "r"."id" as rule_id
      from "programs" "p"
      left join "commission_rules" "r" on "r"."program_id" = "p"."id" and "r"."product_id" = $5::text
      where "p"."id" = (select "program_api_keys"."program_id" from "program_api_keys" where "program_api_keys"."key_hash" = $1::text and "program_api_keys"."revoked_at" is null) limit 1) part) as program,
      (select coalesce(json_agg(part), '[]'::json) from (
      select "s"."id" as id, "s"."program_id" as program_id, "s"."id_namespace" as id_namespace
      from "affiliate_sale_events" "s"
      where "s"."id" in (
        select "a"."sale_id" from "payment_aliases" "a"
        where "a"."namespace" in ('live', 'test:' || (select "program_api_keys"."program_id" from "program_api_keys" where "program_api_keys"."key_hash" = $1::text and "program_api_keys"."revoked_at" is null)) and "a"."alias" = $2::text
          and "a"."sale_id" is not null
        union all
        select "x"."id" from "affiliate_sale_events" "x"
        where "x"."id_namespace" in ('live', 'test:' || (select "program_api_keys"."program_id" from "program_api_keys" where "program_api_keys"."key_hash" = $1::text and "program_api_keys"."revoked_at" is null)) and "x"."processor_event_id" = $2::text)) part) as recorded_sales,
      (select row_to_json(part) from (
      select 
  "c"."id" as id, "c"."program_id" as program_id, "c"."partner_id" as partner_id, "c"."click_id" as click_id,
  "c"."clicked_at" as clicked_at, "c"."signed_up_at" as signed_up_at, "c"."first_converted_at" as first_converted_at,
  "c"."first_commission_at" as first_commission_at,
  "c"."provider_customer_id" is not null as has_provider_customer_id, "c"."email_hash" is not null as has_email,
  exists (select 1 from "program_partners" "pp"
          where "pp"."program_id" = "c"."program_id" and "pp"."partner_id" = "c"."partner_id" and "pp"."status" = 'active')
    as partner_is_member from "customers" "c"
      where "c"."customer_key" = $3::text and "c"."program_id" = (select "program_api_keys"."program_id" from "program_api_keys" where "program_api_keys"."key_hash" = $1::text and "program_api_keys"."revoked_at" is null) limit 1) part) as customer_by_key,
      (select row_to_json(part) from (
      select coalesce("o"."click_id", "k"."click_id") as click_id, coalesce("o"."program_id", "k"."program_id") as program_id,
             coalesce("o"."partner_id", "k"."partner_id") as partner_id,
             coalesce("o"."created_at", "k"."created_at") as created_at, "k"."is_test" as is_test,
             exists (select 1 from "program_partners" "pp"
                     where "pp"."program_id" = coalesce("o"."program_id", "k"."program_id")
                       and "pp"."partner_id" = coalesce("o"."partner_id", "k"."partner_id") and "pp"."status" = 'active')
               as partner_is_member,
             (select row_to_json(cc) from (
                select 
  "c"."id" as id, "c"."program_id" as program_id, "c"."partner_id" as partner_id, "c"."click_id" as click_id,
  "c"."clicked_at" as clicked_at, "c"."signed_up_at" as signed_up_at, "c"."first_converted_at" as first_converted_at,
  "c"."first_commission_at" as first_commission_at,
  "c"."provider_customer_id" is not null as has_provider_customer_id, "c"."email_hash" is not null as has_email,
  exists (select 1 from "program_partners" "pp"
          where "pp"."program_id" = "c"."program_id" and "pp"."partner_id" = "c"."partner_id" and "pp"."status" = 'active')
    as partner_is_member from "customers" "c"
                where "c"."program_id" = coalesce("o"."program_id", "k"."program_id")
                  and "c"."click_id" = coalesce("o"."click_id", "k"."click_id")) cc) as customer
      from "affiliate_click_events" "k"
      left join "affiliate_click_events" "o" on "o"."click_id" = "k"."visitor_click_id"
      where "k"."click_id" = $4::text limit 1) part) as click;
END;
$kept$;
