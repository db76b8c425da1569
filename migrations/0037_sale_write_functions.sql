-- The sale write's statements that were still planned on every sale, as kept-plan functions
-- (lib/tracking/sale/sale-store.ts, lib/db/kept-plan.ts):
--   claim_payment_ids: the payment's ids into the ids index (a JSON array: one parameter for any number);
--   create_converted_customer, convert_customer: the sale's customer, created from its click or converted;
--   insert_sale_commission, credit_sale_commission: the commission and, approved at once, its credit (the
--     ledger row, the balance and credited_at, one statement where three were);
--   link_payment_ids_and_enqueue_webhooks: the ids linked to the sale with the guard that was a statement of
--     its own (and that now also fails when another transaction linked one of the ids while this one waited
--     for its row), the sale's webhooks and the ids written: one statement where four were.
-- enqueue_sale_webhooks and read_written_sale_ids are no longer called; they stay for workers deployed before
-- this migration, until a later migration drops them.
CREATE OR REPLACE FUNCTION claim_payment_ids(integer, text, text, json)
RETURNS void
LANGUAGE plpgsql SET plan_cache_mode = force_generic_plan SET enable_seqscan = off AS $kept$
#variable_conflict use_column
BEGIN
insert into "payment_aliases" ("program_id", "namespace", "alias",
                        "payment_id", "sale_id")
      select $1::int, $2::text, id.alias, $3::text, null::bigint
      from json_array_elements_text($4::json) id(alias)
      on conflict ("namespace", "alias") do nothing;
END;
$kept$;
--> statement-breakpoint
CREATE OR REPLACE FUNCTION create_converted_customer(integer, integer, text, timestamp with time zone, text, text, text, text, timestamp with time zone, timestamp with time zone, timestamp with time zone)
RETURNS TABLE (created boolean)
LANGUAGE plpgsql SET plan_cache_mode = force_generic_plan SET enable_seqscan = off AS $kept$
#variable_conflict use_column
BEGIN
  RETURN QUERY
with created as (
        insert into "customers" ("program_id", "partner_id", "click_id", "clicked_at", "status", "customer_key", "email_hash", "email_masked", "provider_customer_id", "signed_up_at", "first_converted_at", "first_commission_at", "created_at", "updated_at")
        values ($1::int, $2::int, $3::text, $4::timestamptz,
                'converted', $5::text, $6::text, $7::text,
                $8::text, $9::timestamptz, $11::timestamptz,
                $10::timestamptz, $11::timestamptz, $11::timestamptz)
        on conflict do nothing
        returning "customers"."id")
      select guard(exists (select 1 from created), 'customer created meanwhile') as created;
END;
$kept$;
--> statement-breakpoint
CREATE OR REPLACE FUNCTION convert_customer(bigint, timestamp with time zone, timestamp with time zone, text, text, text, timestamp with time zone)
RETURNS TABLE (converted boolean)
LANGUAGE plpgsql SET plan_cache_mode = force_generic_plan SET enable_seqscan = off AS $kept$
#variable_conflict use_column
BEGIN
  RETURN QUERY
with updated as (
        update "customers"
        set "status" = 'converted',
            "first_converted_at" = coalesce("customers"."first_converted_at", $7::timestamptz),
            "first_commission_at" = coalesce("customers"."first_commission_at", $3::timestamptz),
            "provider_customer_id" = coalesce("customers"."provider_customer_id", $4::text),
            "email_hash" = coalesce("customers"."email_hash", $5::text),
            "email_masked" =
              case when "customers"."email_hash" is null then $6::text else "customers"."email_masked" end,
            "updated_at" = $7::timestamptz
        where "customers"."id" = $1::bigint
          and date_trunc('milliseconds', "customers"."first_commission_at") is not distinct from $2::timestamptz
        returning "customers"."id")
      select guard(exists (select 1 from updated), 'customer changed meanwhile') as converted;
END;
$kept$;
--> statement-breakpoint
CREATE OR REPLACE FUNCTION insert_sale_commission(text, text, bigint, text, text, timestamp with time zone, timestamp with time zone, timestamp with time zone)
RETURNS void
LANGUAGE plpgsql SET plan_cache_mode = force_generic_plan SET enable_seqscan = off AS $kept$
#variable_conflict use_column
BEGIN
insert into "commissions" ("sale_id", "program_id", "partner_id", "customer_id", "amount_cents", "currency", "status", "hold_until", "approved_at", "created_at", "updated_at")
      select "s"."id", "s"."program_id", "s"."partner_id", "s"."customer_id", $3::bigint, $4::text,
             $5::text, $6::timestamptz, $7::timestamptz, $8::timestamptz,
             $8::timestamptz
      from "affiliate_sale_events" "s" where "s"."processor_event_id" = $1::text and "s"."id_namespace" = $2::text;
END;
$kept$;
--> statement-breakpoint
CREATE OR REPLACE FUNCTION credit_sale_commission(text, text, timestamp with time zone)
RETURNS TABLE (credited integer)
LANGUAGE plpgsql SET plan_cache_mode = force_generic_plan SET enable_seqscan = off AS $kept$
#variable_conflict use_column
BEGIN
  RETURN QUERY
with credit as (
      select "c"."id" as id, "c"."program_id" as program_id, "c"."partner_id" as partner_id, "c"."currency" as currency,
             "c"."amount_cents" - "c"."deducted_cents" as cents
      from "commissions" "c" where "c"."id" = (select "c"."id" from "commissions" "c" join "affiliate_sale_events" "s" on "s"."id" = "c"."sale_id" where "s"."processor_event_id" = $1::text and "s"."id_namespace" = $2::text)),
    ledger as (
      insert into "balance_ledger" ("program_id", "partner_id", "currency", "amount_cents", "cause", "commission_id", "created_at")
      select program_id, partner_id, currency, cents, 'commission_credit', id, $3::timestamptz from credit),
    balance as (
      insert into "partner_balances" ("program_id", "partner_id", "currency", "balance_cents", "updated_at")
      select program_id, partner_id, currency, cents, $3::timestamptz from credit
      on conflict ("program_id", "partner_id", "currency") do update
        set "balance_cents" = "partner_balances"."balance_cents" + excluded."balance_cents",
            "updated_at" = excluded."updated_at"),
    marked as (
      update "commissions" set "credited_at" = $3::timestamptz,
                                "updated_at" = $3::timestamptz
      where "commissions"."id" in (select id from credit))
    select count(*)::int as credited from credit;
END;
$kept$;
--> statement-breakpoint
CREATE OR REPLACE FUNCTION link_payment_ids_and_enqueue_webhooks(text, text, json, timestamp with time zone)
RETURNS TABLE (sale_id bigint, commission_id bigint, linked boolean, enqueued integer)
LANGUAGE plpgsql SET plan_cache_mode = force_generic_plan SET enable_seqscan = off AS $kept$
#variable_conflict use_column
BEGIN
  RETURN QUERY
with matching as (
        select "a"."id" from "payment_aliases" "a"
        where "a"."namespace" = $2::text and "a"."alias" = any(array(select json_array_elements_text($3::json)))
        union
        select "a"."id" from "payment_aliases" "a"
        where "a"."namespace" = $2::text and "a"."payment_id" = any(array(select json_array_elements_text($3::json)))),
      linked_now as (
        update "payment_aliases"
        set "sale_id" = (select "s"."id" from "affiliate_sale_events" "s" where "s"."processor_event_id" = $1::text and "s"."id_namespace" = $2::text)
        where "payment_aliases"."id" in (select id from matching) and "payment_aliases"."sale_id" is null
        returning "payment_aliases"."id")
      select "s"."id" as sale_id, "commissions"."id" as commission_id,
             guard(not exists (select 1 from matching
                               where not exists (select 1 from linked_now where linked_now.id = matching.id)),
                   'payment recorded meanwhile') as linked,
             (select count(*)::int from (
    select webhook_enqueue("s"."program_id", 'sale.created', 'sale.created:' || "s"."id", jsonb_build_object(
  'sale_id', "s"."id", 'program_id', "s"."program_id", 'partner_id', "s"."partner_id", 'customer_id', "s"."customer_id",
  'transaction_id', "s"."processor_event_id", 'amount_cents', "s"."amount_cents", 'tax_cents', "s"."tax_cents",
  'currency', "s"."currency", 'product_id', "s"."product_id", 'is_test', "s"."is_test", 'created_at', "s"."created_at"), $4::timestamptz)
    from "affiliate_sale_events" "s" where "s"."processor_event_id" = $1::text and "s"."id_namespace" = $2::text
    union all
    
    select webhook_enqueue("c"."program_id", 'commission.created', 'commission.created:' || "c"."id", jsonb_build_object(
  'commission_id', "c"."id", 'sale_id', "c"."sale_id", 'program_id', "c"."program_id", 'partner_id', "c"."partner_id",
  'status', "c"."status", 'amount_cents', "c"."amount_cents", 'deducted_cents', "c"."deducted_cents",
  'net_amount_cents', "c"."amount_cents" - "c"."deducted_cents", 'currency', "c"."currency", 'hold_until', "c"."hold_until",
  'is_test', "c"."is_test"),
                           $4::timestamptz)
    from "affiliate_sale_events" "s" join "commissions" "c" on "c"."sale_id" = "s"."id" where "s"."processor_event_id" = $1::text and "s"."id_namespace" = $2::text) w) as enqueued
      from "affiliate_sale_events" "s" left join "commissions" on "commissions"."sale_id" = "s"."id"
      where "s"."processor_event_id" = $1::text and "s"."id_namespace" = $2::text;
END;
$kept$;
