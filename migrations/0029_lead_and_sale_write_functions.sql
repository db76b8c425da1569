-- The lead's and the sale's fixed-shape write statements as PL/pgSQL functions (lib/db/kept-plan.ts), as 0026
-- did for the click's: the lead event's three inserts and its webhook statement, the sale's three inserts, its
-- webhooks statement and the read of the ids written. PostgreSQL parses and plans them once per connection
-- instead of on every lead or sale. The TypeScript statements are the source (test/node/kept-plans.test.ts;
-- `npm run db:kept-plans`).
CREATE OR REPLACE FUNCTION insert_lead_event(integer, integer, text, text, text, text, text, boolean, timestamp with time zone, boolean, text, text, boolean, timestamp with time zone)
RETURNS TABLE (id bigint)
LANGUAGE plpgsql AS $kept$
#variable_conflict use_column
BEGIN
  RETURN QUERY
insert into "affiliate_lead_events"
      ("program_id", "customer_id", "partner_id", "click_id", "customer_key", "email_hash", "email_masked", "event_name", "provisional", "settled_at", "via_api_key", "ip_hash", "ua_hash", "is_test", "created_at")
    values
      ($1::int, null::bigint, $2::int, $3::text, $4::text,
       $5::text, $6::text, $7::text, $8::boolean,
       $9::timestamptz, $10::boolean, $11::text, $12::text,
       $13::boolean, $14::timestamptz)
    returning "id";
END;
$kept$;
--> statement-breakpoint
CREATE OR REPLACE FUNCTION insert_lead_event_of_customer(integer, integer, text, text, text, text, text, boolean, timestamp with time zone, boolean, text, text, boolean, timestamp with time zone, bigint)
RETURNS TABLE (id bigint)
LANGUAGE plpgsql AS $kept$
#variable_conflict use_column
BEGIN
  RETURN QUERY
insert into "affiliate_lead_events"
      ("program_id", "customer_id", "partner_id", "click_id", "customer_key", "email_hash", "email_masked", "event_name", "provisional", "settled_at", "via_api_key", "ip_hash", "ua_hash", "is_test", "created_at")
    values
      ($1::int, $15::bigint, $2::int, $3::text, $4::text,
       $5::text, $6::text, $7::text, $8::boolean,
       $9::timestamptz, $10::boolean, $11::text, $12::text,
       $13::boolean, $14::timestamptz)
    returning "id";
END;
$kept$;
--> statement-breakpoint
CREATE OR REPLACE FUNCTION insert_lead_event_of_new_customer(integer, integer, text, text, text, text, text, boolean, timestamp with time zone, boolean, text, text, boolean, timestamp with time zone, integer, text)
RETURNS TABLE (id bigint)
LANGUAGE plpgsql AS $kept$
#variable_conflict use_column
BEGIN
  RETURN QUERY
insert into "affiliate_lead_events"
      ("program_id", "customer_id", "partner_id", "click_id", "customer_key", "email_hash", "email_masked", "event_name", "provisional", "settled_at", "via_api_key", "ip_hash", "ua_hash", "is_test", "created_at")
    values
      ($1::int, (select "customers"."id" from "customers" where "customers"."program_id" = $15::int and "customers"."click_id" = $16::text), $2::int, $3::text, $4::text,
       $5::text, $6::text, $7::text, $8::boolean,
       $9::timestamptz, $10::boolean, $11::text, $12::text,
       $13::boolean, $14::timestamptz)
    returning "id";
END;
$kept$;
--> statement-breakpoint
CREATE OR REPLACE FUNCTION enqueue_lead_webhook(timestamp with time zone)
RETURNS TABLE (enqueued integer)
LANGUAGE plpgsql AS $kept$
#variable_conflict use_column
BEGIN
  RETURN QUERY
select webhook_enqueue("l"."program_id", 'lead.created', 'lead.created:' || "l"."id", jsonb_build_object(
             'lead_id', "l"."id", 'program_id', "l"."program_id", 'partner_id', "l"."partner_id", 'customer_id', "l"."customer_id",
             'click_id', "l"."click_id", 'customer_key', "l"."customer_key", 'event_name', "l"."event_name",
             'provisional', "l"."provisional", 'is_test', "l"."is_test", 'created_at', "l"."created_at"), $1::timestamptz)
    from "affiliate_lead_events" "l"
    where "l"."id" = (select currval(pg_get_serial_sequence('affiliate_lead_events', 'id')));
END;
$kept$;
--> statement-breakpoint
CREATE OR REPLACE FUNCTION insert_sale(text, integer, integer, bigint, bigint, text, text, jsonb, boolean, text, text, text, timestamp with time zone, text, text, boolean, text, boolean, boolean, timestamp with time zone)
RETURNS void
LANGUAGE plpgsql AS $kept$
#variable_conflict use_column
BEGIN
insert into "affiliate_sale_events"
      ("processor_event_id", "program_id", "customer_id", "partner_id", "amount_cents", "tax_cents", "currency", "sale_type", "line_items", "is_recurring", "subscription_id", "subscription_interval", "product_id", "occurred_at", "provider", "provider_payment_id", "livemode", "source", "needs_commission", "is_test", "created_at")
    values
      ($1, $2::int, null::bigint, $3::int,
       $4::bigint, $5::bigint, $6, $7,
       $8::jsonb, $9::boolean,
       $10::text, $11::text, $12::text,
       $13::timestamptz, $14::text, $15::text,
       $16::boolean, $17, $18::boolean, $19::boolean, $20::timestamptz);
END;
$kept$;
--> statement-breakpoint
CREATE OR REPLACE FUNCTION insert_sale_of_customer(text, integer, integer, bigint, bigint, text, text, jsonb, boolean, text, text, text, timestamp with time zone, text, text, boolean, text, boolean, boolean, timestamp with time zone, bigint)
RETURNS void
LANGUAGE plpgsql AS $kept$
#variable_conflict use_column
BEGIN
insert into "affiliate_sale_events"
      ("processor_event_id", "program_id", "customer_id", "partner_id", "amount_cents", "tax_cents", "currency", "sale_type", "line_items", "is_recurring", "subscription_id", "subscription_interval", "product_id", "occurred_at", "provider", "provider_payment_id", "livemode", "source", "needs_commission", "is_test", "created_at")
    values
      ($1, $2::int, $21::bigint, $3::int,
       $4::bigint, $5::bigint, $6, $7,
       $8::jsonb, $9::boolean,
       $10::text, $11::text, $12::text,
       $13::timestamptz, $14::text, $15::text,
       $16::boolean, $17, $18::boolean, $19::boolean, $20::timestamptz);
END;
$kept$;
--> statement-breakpoint
CREATE OR REPLACE FUNCTION insert_sale_of_new_customer(text, integer, integer, bigint, bigint, text, text, jsonb, boolean, text, text, text, timestamp with time zone, text, text, boolean, text, boolean, boolean, timestamp with time zone, integer, text)
RETURNS void
LANGUAGE plpgsql AS $kept$
#variable_conflict use_column
BEGIN
insert into "affiliate_sale_events"
      ("processor_event_id", "program_id", "customer_id", "partner_id", "amount_cents", "tax_cents", "currency", "sale_type", "line_items", "is_recurring", "subscription_id", "subscription_interval", "product_id", "occurred_at", "provider", "provider_payment_id", "livemode", "source", "needs_commission", "is_test", "created_at")
    values
      ($1, $2::int, (select "customers"."id" from "customers" where "customers"."program_id" = $21::int and "customers"."click_id" = $22::text), $3::int,
       $4::bigint, $5::bigint, $6, $7,
       $8::jsonb, $9::boolean,
       $10::text, $11::text, $12::text,
       $13::timestamptz, $14::text, $15::text,
       $16::boolean, $17, $18::boolean, $19::boolean, $20::timestamptz);
END;
$kept$;
--> statement-breakpoint
CREATE OR REPLACE FUNCTION enqueue_sale_webhooks(text, text, timestamp with time zone)
RETURNS TABLE (enqueued integer)
LANGUAGE plpgsql AS $kept$
#variable_conflict use_column
BEGIN
  RETURN QUERY
select webhook_enqueue("s"."program_id", 'sale.created', 'sale.created:' || "s"."id", jsonb_build_object(
  'sale_id', "s"."id", 'program_id', "s"."program_id", 'partner_id', "s"."partner_id", 'customer_id', "s"."customer_id",
  'transaction_id', "s"."processor_event_id", 'amount_cents', "s"."amount_cents", 'tax_cents', "s"."tax_cents",
  'currency', "s"."currency", 'product_id', "s"."product_id", 'is_test', "s"."is_test", 'created_at', "s"."created_at"), $3::timestamptz)
    from "affiliate_sale_events" "s" where "s"."processor_event_id" = $1::text and "s"."id_namespace" = $2::text
    union all
    
    select webhook_enqueue("c"."program_id", 'commission.created', 'commission.created:' || "c"."id", jsonb_build_object(
  'commission_id', "c"."id", 'sale_id', "c"."sale_id", 'program_id', "c"."program_id", 'partner_id', "c"."partner_id",
  'status', "c"."status", 'amount_cents', "c"."amount_cents", 'deducted_cents', "c"."deducted_cents",
  'net_amount_cents', "c"."amount_cents" - "c"."deducted_cents", 'currency', "c"."currency", 'hold_until', "c"."hold_until",
  'is_test', "c"."is_test"),
                           $3::timestamptz)
    from "affiliate_sale_events" "s" join "commissions" "c" on "c"."sale_id" = "s"."id" where "s"."processor_event_id" = $1::text and "s"."id_namespace" = $2::text;
END;
$kept$;
--> statement-breakpoint
CREATE OR REPLACE FUNCTION read_written_sale_ids(text, text)
RETURNS TABLE (sale_id bigint, commission_id bigint)
LANGUAGE plpgsql AS $kept$
#variable_conflict use_column
BEGIN
  RETURN QUERY
select "s"."id" as sale_id, "commissions"."id" as commission_id
      from "affiliate_sale_events" "s" left join "commissions" on "commissions"."sale_id" = "s"."id"
      where "s"."processor_event_id" = $1::text and "s"."id_namespace" = $2::text;
END;
$kept$;
