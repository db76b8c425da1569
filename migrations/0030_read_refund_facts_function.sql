-- The refund read's sale statement as a PL/pgSQL function (lib/db/kept-plan.ts), as 0026 did for the click's:
-- PostgreSQL parses and plans it once per connection instead of on every refund. The TypeScript statement in
-- lib/refunds/refund-store.ts is the source (test/node/kept-plans.test.ts; `npm run db:kept-plans`).
CREATE OR REPLACE FUNCTION read_refund_facts(text, text)
RETURNS TABLE (id bigint, amount_cents bigint, refunded_cents bigint, currency text, needs_commission boolean, program_id integer, advertiser_id integer, commission json, refunds json)
LANGUAGE plpgsql AS $kept$
#variable_conflict use_column
BEGIN
  RETURN QUERY
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
      limit 1;
END;
$kept$;
