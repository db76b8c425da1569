-- A sale's database work, cut where it was done twice or for nothing (the bench's sale spent about 0.8 ms of
-- PostgreSQL CPU each):
-- - The sale's own id goes into the ids index (payment_aliases) once, linked, in the sale's insert; before, the
--   claim wrote it unlinked first and the link rewrote it (a second row version, every index of it written
--   again: about 36 µs a sale measured in a loop). claim_payment_ids now writes only the payment's other ids
--   (a provider's aliases), and the link's guard accepts the sale's own row as linked. Two writers of one id
--   meet at the sale's unique index, as they already could.
-- - A webhook's payload is built, and webhook_enqueue called, only when an enabled endpoint of the program takes
--   the event (lead.created, sale.created, commission.created, commission.updated): without one, the sale's two
--   calls cost about 20 to 35 µs for nothing. webhook_enqueue still asks the same itself.
-- Parameters and results are unchanged, so workers deployed before this migration run on these as they are.
CREATE OR REPLACE FUNCTION record_lead_event(integer, integer, text, text, text, text, text, boolean, timestamp with time zone, boolean, text, text, boolean, timestamp with time zone)
RETURNS TABLE (id bigint, enqueued integer)
LANGUAGE plpgsql SET plan_cache_mode = force_generic_plan SET enable_seqscan = off AS $kept$
#variable_conflict use_column
BEGIN
  RETURN QUERY
with l as (
      insert into "affiliate_lead_events"
        ("program_id", "customer_id", "partner_id", "click_id", "customer_key", "email_hash", "email_masked", "event_name", "provisional", "settled_at", "via_api_key", "ip_hash", "ua_hash", "is_test", "created_at")
      values
        ($1::int, null::bigint, $2::int, $3::text, $4::text,
         $5::text, $6::text, $7::text, $8::boolean,
         $9::timestamptz, $10::boolean, $11::text, $12::text,
         $13::boolean, $14::timestamptz)
      returning *)
    select "l"."id" as id, case when exists (select 1 from "webhook_endpoints" "subscribed_endpoint"
                      where "subscribed_endpoint"."program_id" = "l"."program_id" and "subscribed_endpoint"."enabled" and 'lead.created' = any("subscribed_endpoint"."events"))
    then webhook_enqueue("l"."program_id", 'lead.created', 'lead.created:' || "l"."id", jsonb_build_object(
             'lead_id', "l"."id", 'program_id', "l"."program_id", 'partner_id', "l"."partner_id", 'customer_id', "l"."customer_id",
             'click_id', "l"."click_id", 'customer_key', "l"."customer_key", 'event_name', "l"."event_name",
             'provisional', "l"."provisional", 'is_test', "l"."is_test", 'created_at', "l"."created_at"), $14::timestamptz) else 0 end as enqueued from l;
END;
$kept$;
--> statement-breakpoint
CREATE OR REPLACE FUNCTION record_lead_event_of_customer(integer, integer, text, text, text, text, text, boolean, timestamp with time zone, boolean, text, text, boolean, timestamp with time zone, bigint)
RETURNS TABLE (id bigint, enqueued integer)
LANGUAGE plpgsql SET plan_cache_mode = force_generic_plan SET enable_seqscan = off AS $kept$
#variable_conflict use_column
BEGIN
  RETURN QUERY
with l as (
      insert into "affiliate_lead_events"
        ("program_id", "customer_id", "partner_id", "click_id", "customer_key", "email_hash", "email_masked", "event_name", "provisional", "settled_at", "via_api_key", "ip_hash", "ua_hash", "is_test", "created_at")
      values
        ($1::int, $15::bigint, $2::int, $3::text, $4::text,
         $5::text, $6::text, $7::text, $8::boolean,
         $9::timestamptz, $10::boolean, $11::text, $12::text,
         $13::boolean, $14::timestamptz)
      returning *)
    select "l"."id" as id, case when exists (select 1 from "webhook_endpoints" "subscribed_endpoint"
                      where "subscribed_endpoint"."program_id" = "l"."program_id" and "subscribed_endpoint"."enabled" and 'lead.created' = any("subscribed_endpoint"."events"))
    then webhook_enqueue("l"."program_id", 'lead.created', 'lead.created:' || "l"."id", jsonb_build_object(
             'lead_id', "l"."id", 'program_id', "l"."program_id", 'partner_id', "l"."partner_id", 'customer_id', "l"."customer_id",
             'click_id', "l"."click_id", 'customer_key', "l"."customer_key", 'event_name', "l"."event_name",
             'provisional', "l"."provisional", 'is_test', "l"."is_test", 'created_at', "l"."created_at"), $14::timestamptz) else 0 end as enqueued from l;
END;
$kept$;
--> statement-breakpoint
CREATE OR REPLACE FUNCTION record_lead_event_of_new_customer(integer, integer, text, text, text, text, text, boolean, timestamp with time zone, boolean, text, text, boolean, timestamp with time zone, integer, text)
RETURNS TABLE (id bigint, enqueued integer)
LANGUAGE plpgsql SET plan_cache_mode = force_generic_plan SET enable_seqscan = off AS $kept$
#variable_conflict use_column
BEGIN
  RETURN QUERY
with l as (
      insert into "affiliate_lead_events"
        ("program_id", "customer_id", "partner_id", "click_id", "customer_key", "email_hash", "email_masked", "event_name", "provisional", "settled_at", "via_api_key", "ip_hash", "ua_hash", "is_test", "created_at")
      values
        ($1::int, (select "customers"."id" from "customers" where "customers"."program_id" = $15::int and "customers"."click_id" = $16::text), $2::int, $3::text, $4::text,
         $5::text, $6::text, $7::text, $8::boolean,
         $9::timestamptz, $10::boolean, $11::text, $12::text,
         $13::boolean, $14::timestamptz)
      returning *)
    select "l"."id" as id, case when exists (select 1 from "webhook_endpoints" "subscribed_endpoint"
                      where "subscribed_endpoint"."program_id" = "l"."program_id" and "subscribed_endpoint"."enabled" and 'lead.created' = any("subscribed_endpoint"."events"))
    then webhook_enqueue("l"."program_id", 'lead.created', 'lead.created:' || "l"."id", jsonb_build_object(
             'lead_id', "l"."id", 'program_id', "l"."program_id", 'partner_id', "l"."partner_id", 'customer_id', "l"."customer_id",
             'click_id', "l"."click_id", 'customer_key', "l"."customer_key", 'event_name', "l"."event_name",
             'provisional', "l"."provisional", 'is_test', "l"."is_test", 'created_at', "l"."created_at"), $14::timestamptz) else 0 end as enqueued from l;
END;
$kept$;
--> statement-breakpoint
CREATE OR REPLACE FUNCTION record_provisional_lead_event(integer, integer, text, text, text, text, text, boolean, timestamp with time zone, boolean, text, text, boolean, timestamp with time zone, integer, text, text)
RETURNS TABLE (id bigint, enqueued integer)
LANGUAGE plpgsql SET plan_cache_mode = force_generic_plan SET enable_seqscan = off AS $kept$
#variable_conflict use_column
BEGIN
  RETURN QUERY
with l as (
      insert into "affiliate_lead_events"
        ("program_id", "customer_id", "partner_id", "click_id", "customer_key", "email_hash", "email_masked", "event_name", "provisional", "settled_at", "via_api_key", "ip_hash", "ua_hash", "is_test", "created_at")
      values
        ($1::int, null::bigint, $2::int, $3::text, $4::text,
         $5::text, $6::text, $7::text, $8::boolean,
         $9::timestamptz, $10::boolean, $11::text, $12::text,
         $13::boolean, $14::timestamptz)
      returning *)
    select "l"."id" as id, case when exists (select 1 from "webhook_endpoints" "subscribed_endpoint"
                      where "subscribed_endpoint"."program_id" = "l"."program_id" and "subscribed_endpoint"."enabled" and 'lead.created' = any("subscribed_endpoint"."events"))
    then webhook_enqueue("l"."program_id", 'lead.created', 'lead.created:' || "l"."id", jsonb_build_object(
             'lead_id', "l"."id", 'program_id', "l"."program_id", 'partner_id', "l"."partner_id", 'customer_id', "l"."customer_id",
             'click_id', "l"."click_id", 'customer_key', "l"."customer_key", 'event_name', "l"."event_name",
             'provisional', "l"."provisional", 'is_test', "l"."is_test", 'created_at', "l"."created_at"), $14::timestamptz) else 0 end as enqueued from l
    where guard(
      not exists (
        select 1 from "customers"
        where "customers"."program_id" = $15::int and "customers"."click_id" = $16::text
          and "customers"."status" <> 'clicked')
      and not exists (
        select 1 from "customers"
        where "customers"."program_id" = $15::int and "customers"."customer_key" = $17::text
          and "customers"."status" <> 'clicked'),
      'lead-provisional-customer-unchanged');
END;
$kept$;
--> statement-breakpoint
CREATE OR REPLACE FUNCTION insert_sale(text, integer, integer, bigint, bigint, text, text, jsonb, boolean, text, text, text, timestamp with time zone, text, text, boolean, text, boolean, boolean, timestamp with time zone)
RETURNS void
LANGUAGE plpgsql SET plan_cache_mode = force_generic_plan SET enable_seqscan = off AS $kept$
#variable_conflict use_column
BEGIN
with sale as (
    insert into "affiliate_sale_events"
      ("processor_event_id", "program_id", "customer_id", "partner_id", "amount_cents", "tax_cents", "currency", "sale_type", "line_items", "is_recurring", "subscription_id", "subscription_interval", "product_id", "occurred_at", "provider", "provider_payment_id", "livemode", "source", "needs_commission", "is_test", "created_at")
    values
      ($1, $2::int, null::bigint, $3::int,
       $4::bigint, $5::bigint, $6, $7,
       $8::jsonb, $9::boolean,
       $10::text, $11::text, $12::text,
       $13::timestamptz, $14::text, $15::text,
       $16::boolean, $17, $18::boolean, $19::boolean, $20::timestamptz)
      returning "id", "program_id", "id_namespace", "processor_event_id")
    insert into "payment_aliases" ("program_id", "namespace", "alias", "payment_id", "sale_id")
    select "program_id", "id_namespace", "processor_event_id",
           "processor_event_id", "id"
    from sale
    on conflict ("namespace", "alias") do nothing;
END;
$kept$;
--> statement-breakpoint
CREATE OR REPLACE FUNCTION insert_sale_of_customer(text, integer, integer, bigint, bigint, text, text, jsonb, boolean, text, text, text, timestamp with time zone, text, text, boolean, text, boolean, boolean, timestamp with time zone, bigint)
RETURNS void
LANGUAGE plpgsql SET plan_cache_mode = force_generic_plan SET enable_seqscan = off AS $kept$
#variable_conflict use_column
BEGIN
with sale as (
    insert into "affiliate_sale_events"
      ("processor_event_id", "program_id", "customer_id", "partner_id", "amount_cents", "tax_cents", "currency", "sale_type", "line_items", "is_recurring", "subscription_id", "subscription_interval", "product_id", "occurred_at", "provider", "provider_payment_id", "livemode", "source", "needs_commission", "is_test", "created_at")
    values
      ($1, $2::int, $21::bigint, $3::int,
       $4::bigint, $5::bigint, $6, $7,
       $8::jsonb, $9::boolean,
       $10::text, $11::text, $12::text,
       $13::timestamptz, $14::text, $15::text,
       $16::boolean, $17, $18::boolean, $19::boolean, $20::timestamptz)
      returning "id", "program_id", "id_namespace", "processor_event_id")
    insert into "payment_aliases" ("program_id", "namespace", "alias", "payment_id", "sale_id")
    select "program_id", "id_namespace", "processor_event_id",
           "processor_event_id", "id"
    from sale
    on conflict ("namespace", "alias") do nothing;
END;
$kept$;
--> statement-breakpoint
CREATE OR REPLACE FUNCTION insert_sale_of_new_customer(text, integer, integer, bigint, bigint, text, text, jsonb, boolean, text, text, text, timestamp with time zone, text, text, boolean, text, boolean, boolean, timestamp with time zone, integer, text)
RETURNS void
LANGUAGE plpgsql SET plan_cache_mode = force_generic_plan SET enable_seqscan = off AS $kept$
#variable_conflict use_column
BEGIN
with sale as (
    insert into "affiliate_sale_events"
      ("processor_event_id", "program_id", "customer_id", "partner_id", "amount_cents", "tax_cents", "currency", "sale_type", "line_items", "is_recurring", "subscription_id", "subscription_interval", "product_id", "occurred_at", "provider", "provider_payment_id", "livemode", "source", "needs_commission", "is_test", "created_at")
    values
      ($1, $2::int, (select "customers"."id" from "customers" where "customers"."program_id" = $21::int and "customers"."click_id" = $22::text), $3::int,
       $4::bigint, $5::bigint, $6, $7,
       $8::jsonb, $9::boolean,
       $10::text, $11::text, $12::text,
       $13::timestamptz, $14::text, $15::text,
       $16::boolean, $17, $18::boolean, $19::boolean, $20::timestamptz)
      returning "id", "program_id", "id_namespace", "processor_event_id")
    insert into "payment_aliases" ("program_id", "namespace", "alias", "payment_id", "sale_id")
    select "program_id", "id_namespace", "processor_event_id",
           "processor_event_id", "id"
    from sale
    on conflict ("namespace", "alias") do nothing;
END;
$kept$;
--> statement-breakpoint
CREATE OR REPLACE FUNCTION claim_payment_ids(integer, text, text, json)
RETURNS void
LANGUAGE plpgsql SET plan_cache_mode = force_generic_plan SET enable_seqscan = off AS $kept$
#variable_conflict use_column
BEGIN
insert into "payment_aliases" ("program_id", "namespace", "alias",
                        "payment_id", "sale_id")
      select $1::int, $2::text, id.alias, $3::text, null::bigint
      from json_array_elements_text($4::json) id(alias)
      where id.alias <> $3::text
      on conflict ("namespace", "alias") do nothing;
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
        select "a"."id", "a"."sale_id" from "payment_aliases" "a"
        where "a"."namespace" = $2::text and "a"."alias" = any(array(select json_array_elements_text($3::json)))
        union
        select "a"."id", "a"."sale_id" from "payment_aliases" "a"
        where "a"."namespace" = $2::text and "a"."payment_id" = any(array(select json_array_elements_text($3::json)))),
      linked_now as (
        update "payment_aliases"
        set "sale_id" = (select "s"."id" from "affiliate_sale_events" "s" where "s"."processor_event_id" = $1::text and "s"."id_namespace" = $2::text)
        where "payment_aliases"."id" = any(array(select id from matching where sale_id is null)) and "payment_aliases"."sale_id" is null
        returning "payment_aliases"."id")
      select "s"."id" as sale_id, "commissions"."id" as commission_id,
             guard(not exists (select 1 from matching
                               where matching.sale_id is distinct from "s"."id"
                                 and not exists (select 1 from linked_now where linked_now.id = matching.id)),
                   'payment recorded meanwhile') as linked,
             (select count(*)::int from (
    select case when exists (select 1 from "webhook_endpoints" "subscribed_endpoint"
                      where "subscribed_endpoint"."program_id" = "s"."program_id" and "subscribed_endpoint"."enabled" and 'sale.created' = any("subscribed_endpoint"."events"))
    then webhook_enqueue("s"."program_id", 'sale.created', 'sale.created:' || "s"."id", jsonb_build_object(
  'sale_id', "s"."id", 'program_id', "s"."program_id", 'partner_id', "s"."partner_id", 'customer_id', "s"."customer_id",
  'transaction_id', "s"."processor_event_id", 'amount_cents', "s"."amount_cents", 'tax_cents', "s"."tax_cents",
  'currency', "s"."currency", 'product_id', "s"."product_id", 'is_test', "s"."is_test", 'created_at', "s"."created_at"), $4::timestamptz) else 0 end
    from "affiliate_sale_events" "s" where "s"."processor_event_id" = $1::text and "s"."id_namespace" = $2::text
    union all
    
    select case when exists (select 1 from "webhook_endpoints" "subscribed_endpoint"
                      where "subscribed_endpoint"."program_id" = "c"."program_id" and "subscribed_endpoint"."enabled" and 'commission.created' = any("subscribed_endpoint"."events"))
    then webhook_enqueue("c"."program_id", 'commission.created', 'commission.created:' || "c"."id", jsonb_build_object(
  'commission_id', "c"."id", 'sale_id', "c"."sale_id", 'program_id', "c"."program_id", 'partner_id', "c"."partner_id",
  'status', "c"."status", 'amount_cents', "c"."amount_cents", 'deducted_cents', "c"."deducted_cents",
  'net_amount_cents', "c"."amount_cents" - "c"."deducted_cents", 'currency', "c"."currency", 'hold_until', "c"."hold_until",
  'is_test', "c"."is_test"), $4::timestamptz) else 0 end
    from "affiliate_sale_events" "s" join "commissions" "c" on "c"."sale_id" = "s"."id" where "s"."processor_event_id" = $1::text and "s"."id_namespace" = $2::text) w) as enqueued
      from "affiliate_sale_events" "s" left join "commissions" on "commissions"."sale_id" = "s"."id"
      where "s"."processor_event_id" = $1::text and "s"."id_namespace" = $2::text;
END;
$kept$;
--> statement-breakpoint
CREATE OR REPLACE FUNCTION enqueue_commission_refunded_webhook(bigint, bigint, text, timestamp with time zone)
RETURNS TABLE (enqueued integer)
LANGUAGE plpgsql SET plan_cache_mode = force_generic_plan SET enable_seqscan = off AS $kept$
#variable_conflict use_column
BEGIN
  RETURN QUERY
select case when exists (select 1 from "webhook_endpoints" "subscribed_endpoint"
                      where "subscribed_endpoint"."program_id" = "c"."program_id" and "subscribed_endpoint"."enabled" and 'commission.updated' = any("subscribed_endpoint"."events"))
    then webhook_enqueue("c"."program_id", 'commission.updated', 'commission.updated:refund:' || "r"."id", jsonb_build_object(
  'commission_id', "c"."id", 'sale_id', "c"."sale_id", 'program_id', "c"."program_id", 'partner_id', "c"."partner_id",
  'status', "c"."status", 'amount_cents', "c"."amount_cents", 'deducted_cents', "c"."deducted_cents",
  'net_amount_cents', "c"."amount_cents" - "c"."deducted_cents", 'currency', "c"."currency", 'hold_until', "c"."hold_until",
  'is_test', "c"."is_test") || jsonb_build_object('reason', "r"."reason", 'refund', jsonb_build_object(
               'refund_id', "r"."refund_id", 'amount_cents', "r"."amount_cents",
               'refunded_total_cents', "r"."refunded_total_cents", 'deduction_cents', "r"."deduction_cents")), $4::timestamptz) else 0 end
    from "commissions" "c", "refunds" "r" where "c"."id" = $1::bigint and "r"."id" = (select "refunds"."id" from "refunds" where "refunds"."sale_id" = $2::bigint and "refunds"."idempotency_key" = $3::text);
END;
$kept$;
