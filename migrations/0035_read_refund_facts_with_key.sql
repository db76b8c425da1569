-- The refund read as ONE statement (lib/refunds/refund-store.ts, read_refund_facts): the key's record joins
-- 0030's sale statement, each part as JSON, where the read sent two statements. Its result changes, so the
-- function is dropped and made again.
DROP FUNCTION read_refund_facts(text, text);
--> statement-breakpoint
CREATE OR REPLACE FUNCTION read_refund_facts(text, text)
RETURNS TABLE (key json, sale json)
LANGUAGE plpgsql SET plan_cache_mode = force_generic_plan AS $kept$
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
          where "s"."program_id" = (select "program_api_keys"."program_id" from "program_api_keys" where "program_api_keys"."key_hash" = $1::text and "program_api_keys"."revoked_at" is null)
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
