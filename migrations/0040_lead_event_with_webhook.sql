-- The lead event's insert and its lead.created webhook as one statement (lib/tracking/lead/lead-store.ts):
-- each insert returns its row as `l`, which the webhook's payload reads, where 0029's inserts and
-- enqueue_lead_webhook (which found the row by the sequence's currval) were two statements. One kept-plan
-- function per way the lead names its customer, as before, and one for a provisional lead, whose guard
-- (0036's guard_provisional_lead, a statement of its own) is now the insert's: a browser lead's write is one
-- statement where it was three. The functions replaced are no longer called; they stay for workers deployed
-- before this migration, until a later migration drops them.
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
    select "l"."id" as id, webhook_enqueue("l"."program_id", 'lead.created', 'lead.created:' || "l"."id", jsonb_build_object(
             'lead_id', "l"."id", 'program_id', "l"."program_id", 'partner_id', "l"."partner_id", 'customer_id', "l"."customer_id",
             'click_id', "l"."click_id", 'customer_key', "l"."customer_key", 'event_name', "l"."event_name",
             'provisional', "l"."provisional", 'is_test', "l"."is_test", 'created_at', "l"."created_at"), $14::timestamptz) as enqueued from l;
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
    select "l"."id" as id, webhook_enqueue("l"."program_id", 'lead.created', 'lead.created:' || "l"."id", jsonb_build_object(
             'lead_id', "l"."id", 'program_id', "l"."program_id", 'partner_id', "l"."partner_id", 'customer_id', "l"."customer_id",
             'click_id', "l"."click_id", 'customer_key', "l"."customer_key", 'event_name', "l"."event_name",
             'provisional', "l"."provisional", 'is_test', "l"."is_test", 'created_at', "l"."created_at"), $14::timestamptz) as enqueued from l;
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
    select "l"."id" as id, webhook_enqueue("l"."program_id", 'lead.created', 'lead.created:' || "l"."id", jsonb_build_object(
             'lead_id', "l"."id", 'program_id', "l"."program_id", 'partner_id', "l"."partner_id", 'customer_id', "l"."customer_id",
             'click_id', "l"."click_id", 'customer_key', "l"."customer_key", 'event_name', "l"."event_name",
             'provisional', "l"."provisional", 'is_test', "l"."is_test", 'created_at', "l"."created_at"), $14::timestamptz) as enqueued from l;
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
    select "l"."id" as id, webhook_enqueue("l"."program_id", 'lead.created', 'lead.created:' || "l"."id", jsonb_build_object(
             'lead_id', "l"."id", 'program_id', "l"."program_id", 'partner_id', "l"."partner_id", 'customer_id', "l"."customer_id",
             'click_id', "l"."click_id", 'customer_key', "l"."customer_key", 'event_name', "l"."event_name",
             'provisional', "l"."provisional", 'is_test', "l"."is_test", 'created_at', "l"."created_at"), $14::timestamptz) as enqueued from l
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
