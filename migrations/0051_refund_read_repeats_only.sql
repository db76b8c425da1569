-- The refund endpoint's read takes the refund the call would repeat (lib/refunds/decide-refund.ts, `repeatOf`):
-- its idempotency key and, for a partial refund without a refund_id, its amount. Of the sale's applied refunds it
-- returns only those: the one under that key (a lookup on the sale and key) and, only when the amount counts, those
-- of that amount (the sale's refunds walked by the sale, none sent but those), instead of every one as JSON, so
-- what the read sends and the worker parses no longer grows with the sale's refunds.
-- New names, read_refund_and_repeats and its batch: the two-parameter read_refund_facts and read_refund_facts_batch
-- stay, unchanged, for workers deployed before this migration (they read every refund and decide as before), until
-- a later migration drops them. Replacing them under their own names would have fed such a worker's batched reads
-- no refunds at all (its items carry no key), and a refund repeated by its amount would have been applied twice.
CREATE OR REPLACE FUNCTION read_refund_and_repeats(text, text, text, bigint)
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
  coalesce((select json_agg(json_build_object('key', applied.key, 'amount', applied.amount))
            from (
  select "r"."idempotency_key" as key, "r"."requested_cents" as amount from "refunds" "r"
  where "r"."sale_id" = "s"."id" and "r"."idempotency_key" = $3::text
  union all
  select "r"."idempotency_key", "r"."requested_cents" from "refunds" "r"
  where $4::bigint is not null and "r"."sale_id" = "s"."id"
    and "r"."requested_cents" = $4::bigint and "r"."idempotency_key" <> $3::text) applied), '[]'::json) as refunds
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
CREATE OR REPLACE FUNCTION read_refund_and_repeats_batch(jsonb)
RETURNS TABLE (batch_item integer, key json, sale json)
LANGUAGE plpgsql SET plan_cache_mode = force_generic_plan AS $kept$
DECLARE
  item jsonb;
BEGIN
  batch_item := 0;
  FOR item IN SELECT * FROM jsonb_array_elements($1) LOOP
    RETURN QUERY SELECT batch_item, * FROM read_refund_and_repeats((item->>0)::text, (item->>1)::text, (item->>2)::text, (item->>3)::bigint);
    batch_item := batch_item + 1;
  END LOOP;
END;
$kept$;
