-- The sale read's four statements as PL/pgSQL functions (lib/db/kept-plan.ts), as 0026 did for the click's:
-- PostgreSQL parses and plans them once per connection instead of on every sale. The TypeScript statements in
-- lib/tracking/sale/sale-store.ts are the source (test/node/kept-plans.test.ts; `npm run db:kept-plans`).
CREATE OR REPLACE FUNCTION read_sale_program(text, text)
RETURNS TABLE (id integer, attribution_window_days integer, commission_type text, commission_rate numeric, duration_months integer, hold_days integer, rule_type text, rule_rate numeric, rule_duration integer, rule_id integer)
LANGUAGE plpgsql AS $kept$
#variable_conflict use_column
BEGIN
  RETURN QUERY
select "p"."id" as id, "p"."attribution_window_days" as attribution_window_days,
             "p"."commission_type" as commission_type, "p"."commission_rate" as commission_rate,
             "p"."duration_months" as duration_months, "p"."hold_days" as hold_days,
             "r"."commission_type" as rule_type, "r"."commission_rate" as rule_rate, "r"."duration_months" as rule_duration,
             "r"."id" as rule_id
      from "programs" "p"
      left join "commission_rules" "r" on "r"."program_id" = "p"."id" and "r"."product_id" = $2::text
      where "p"."id" = (select "program_api_keys"."program_id" from "program_api_keys" where "program_api_keys"."key_hash" = $1::text and "program_api_keys"."revoked_at" is null);
END;
$kept$;
--> statement-breakpoint
CREATE OR REPLACE FUNCTION read_recorded_sales(text, text)
RETURNS TABLE (id bigint, program_id integer, id_namespace text)
LANGUAGE plpgsql AS $kept$
#variable_conflict use_column
BEGIN
  RETURN QUERY
select "s"."id" as id, "s"."program_id" as program_id, "s"."id_namespace" as id_namespace
      from "affiliate_sale_events" "s"
      where "s"."id" in (
        select "a"."sale_id" from "payment_aliases" "a"
        where "a"."namespace" in ('live', 'test:' || (select "program_api_keys"."program_id" from "program_api_keys" where "program_api_keys"."key_hash" = $1::text and "program_api_keys"."revoked_at" is null)) and "a"."alias" = $2::text
          and "a"."sale_id" is not null
        union all
        select "x"."id" from "affiliate_sale_events" "x"
        where "x"."id_namespace" in ('live', 'test:' || (select "program_api_keys"."program_id" from "program_api_keys" where "program_api_keys"."key_hash" = $1::text and "program_api_keys"."revoked_at" is null)) and "x"."processor_event_id" = $2::text);
END;
$kept$;
--> statement-breakpoint
CREATE OR REPLACE FUNCTION read_sale_customer_by_key(text, text)
RETURNS TABLE (id bigint, program_id integer, partner_id integer, click_id text, clicked_at timestamp with time zone, signed_up_at timestamp with time zone, first_converted_at timestamp with time zone, first_commission_at timestamp with time zone, partner_is_member boolean)
LANGUAGE plpgsql AS $kept$
#variable_conflict use_column
BEGIN
  RETURN QUERY
select 
  "c"."id" as id, "c"."program_id" as program_id, "c"."partner_id" as partner_id, "c"."click_id" as click_id,
  "c"."clicked_at" as clicked_at, "c"."signed_up_at" as signed_up_at, "c"."first_converted_at" as first_converted_at,
  "c"."first_commission_at" as first_commission_at,
  exists (select 1 from "program_partners" "pp"
          where "pp"."program_id" = "c"."program_id" and "pp"."partner_id" = "c"."partner_id" and "pp"."status" = 'active')
    as partner_is_member from "customers" "c"
      where "c"."customer_key" = $2::text and "c"."program_id" = (select "program_api_keys"."program_id" from "program_api_keys" where "program_api_keys"."key_hash" = $1::text and "program_api_keys"."revoked_at" is null);
END;
$kept$;
--> statement-breakpoint
CREATE OR REPLACE FUNCTION read_sale_click(text)
RETURNS TABLE (click_id text, program_id integer, partner_id integer, created_at timestamp with time zone, is_test boolean, partner_is_member boolean, customer json)
LANGUAGE plpgsql AS $kept$
#variable_conflict use_column
BEGIN
  RETURN QUERY
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
  exists (select 1 from "program_partners" "pp"
          where "pp"."program_id" = "c"."program_id" and "pp"."partner_id" = "c"."partner_id" and "pp"."status" = 'active')
    as partner_is_member from "customers" "c"
                where "c"."program_id" = coalesce("o"."program_id", "k"."program_id")
                  and "c"."click_id" = coalesce("o"."click_id", "k"."click_id")) cc) as customer
      from "affiliate_click_events" "k"
      left join "affiliate_click_events" "o" on "o"."click_id" = "k"."visitor_click_id"
      where "k"."click_id" = $1::text;
END;
$kept$;
