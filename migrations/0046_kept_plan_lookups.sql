-- Every kept-plan lookup is a lookup whatever the statistics its plan was made from
-- (test/node/kept-plan-lookups.test.ts). A kept (generic) plan is made once per connection from the statistics
-- of that moment, and some of those plans walked an index instead of looking a row up:
--   * a sale's link of its payment ids (link_payment_ids_and_enqueue_webhooks) found the rows to link through
--     payment_aliases_sale_idx or payment_aliases_unlinked_idx as `sale_id is null` once the statistics said
--     few ids were unlinked, and so read every id unlinked since the last vacuum, on every sale (about 1,000
--     entries a sale on the bench's database, 1,700 in another run). No index now holds the unlinked rows:
--     payment_aliases_sale_idx keeps the linked ones (every lookup by sale names one), and a payment's unlinked
--     ids are found by payment_aliases_namespace_payment_idx, and the link updates the rows it matched by
--     `id = any(array(...))`, each looked up by its primary key (`id in (select ...)` let a plan made from
--     those statistics walk the whole primary key, filtering `sale_id is null`);
--   * on a freshly migrated database, a customer found by its click (program_id, click_id) walked its program
--     through customers_program_provider_customer_idx: that index and customers_program_email_idx now hold
--     only the customers with a provider id or an email, the only ones their lookups can find;
--   * on a freshly migrated database, a lead's visitor click and a refund's sale walked their program through
--     its click or sale index: the program is now checked on the row the unique key found (read_lead_facts,
--     read_refund_facts, lib/db/checked-not-searched.ts).
-- Plain CREATE INDEX, as the earlier migrations: each takes a short lock on a table of at most a row per sale
-- or per customer.
DROP INDEX IF EXISTS "payment_aliases_unlinked_idx";
--> statement-breakpoint
DROP INDEX IF EXISTS "payment_aliases_sale_idx";
--> statement-breakpoint
CREATE INDEX "payment_aliases_sale_idx" ON "payment_aliases" USING btree ("sale_id") WHERE "payment_aliases"."sale_id" is not null;
--> statement-breakpoint
DROP INDEX IF EXISTS "customers_program_provider_customer_idx";
--> statement-breakpoint
CREATE INDEX "customers_program_provider_customer_idx" ON "customers" USING btree ("program_id","provider_customer_id") WHERE "customers"."provider_customer_id" is not null;
--> statement-breakpoint
DROP INDEX IF EXISTS "customers_program_email_idx";
--> statement-breakpoint
CREATE INDEX "customers_program_email_idx" ON "customers" USING btree ("program_id","email_hash") WHERE "customers"."email_hash" is not null;
--> statement-breakpoint
CREATE OR REPLACE FUNCTION read_lead_facts(text, text, text, integer)
RETURNS TABLE (api_key json, click json, customer_by_click json, customer_by_key json, programs json)
LANGUAGE plpgsql SET plan_cache_mode = force_generic_plan SET enable_seqscan = off AS $kept$
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
      left join "affiliate_click_events" "o"
        on "o"."click_id" = s.visitor_click_id and ("o"."program_id" = s.program_id) is true
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
--> statement-breakpoint
CREATE OR REPLACE FUNCTION read_refund_facts(text, text)
RETURNS TABLE (key json, sale json)
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
          select 
  "s"."id" as id, "s"."amount_cents" as amount_cents, "s"."refunded_cents" as refunded_cents,
  "s"."currency" as currency, "s"."needs_commission" as needs_commission,
  "s"."program_id" as program_id, "p"."advertiser_id" as advertiser_id,
  (select row_to_json(c) from (
     select "commissions"."id" as id, "commissions"."amount_cents" as amount_cents, "commissions"."deducted_cents" as deducted_cents,
            "commissions"."status" as status, "commissions"."credited_at" is not null as credited,
            "commissions"."paid_out_at" is not null or "commissions"."status" = 'paid' as paid_out, "commissions"."version" as version,
            "commissions"."is_test" as is_test, "commissions"."partner_id" as partner_id
     from "commissions" where "commissions"."sale_id" = "s"."id") c) as commission,
  coalesce((select json_agg(json_build_object('key', "r"."idempotency_key", 'amount', "r"."requested_cents"))
            from "refunds" "r" where "r"."sale_id" = "s"."id"), '[]'::json) as refunds
          from "affiliate_sale_events" "s"
          join "programs" "p" on "p"."id" = "s"."program_id"
          where ("s"."program_id" = (select "program_api_keys"."program_id" from "program_api_keys" where "program_api_keys"."key_hash" = $1::text and "program_api_keys"."revoked_at" is null)) is true
            and "s"."id" in (
              select "x"."id" from "affiliate_sale_events" "x"
              where "x"."id_namespace" in ('live', 'test:' || (select "program_api_keys"."program_id" from "program_api_keys" where "program_api_keys"."key_hash" = $1::text and "program_api_keys"."revoked_at" is null)) and "x"."processor_event_id" = $2::text
              union all
              select "a"."sale_id" from "payment_aliases" "a"
              where "a"."namespace" in ('live', 'test:' || (select "program_api_keys"."program_id" from "program_api_keys" where "program_api_keys"."key_hash" = $1::text and "program_api_keys"."revoked_at" is null)) and "a"."alias" = $2::text and "a"."sale_id" is not null)
          order by "s"."is_test", "s"."id"
          limit 1) part) as sale;
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
        where "payment_aliases"."id" = any(array(select id from matching)) and "payment_aliases"."sale_id" is null
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
