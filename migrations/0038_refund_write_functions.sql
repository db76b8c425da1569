-- The refund write in fewer statements, as kept-plan functions (lib/refunds/refund-store.ts):
--   record_refund: the sale's guarded refunded amount and the refund row, returning its id (three statements
--     were: refund_sale_amount, insert_refund and read_refund_row_id);
--   refund_deduction: the deduction's ledger row, balance and withdrawals fitted to the balance the upsert
--     returns (three statements were: refund_deduction_ledger, _balance and _withdrawals).
-- Each statement costs the database, the SQL endpoint and the worker a round of handling; a refund with a
-- deduction now sends four in its write where it sent eight. The replaced functions are no longer called;
-- they stay for workers deployed before this migration, until a later migration drops them.
CREATE OR REPLACE FUNCTION record_refund(bigint, bigint, bigint, text, text, bigint, bigint, bigint, bigint, text, text, timestamp with time zone)
RETURNS TABLE (ok boolean, refund_id bigint)
LANGUAGE plpgsql SET plan_cache_mode = force_generic_plan AS $kept$
#variable_conflict use_column
BEGIN
  RETURN QUERY
with updated as (
        update "affiliate_sale_events" set "refunded_cents" = $8::bigint
        where "affiliate_sale_events"."id" = $1::bigint and "affiliate_sale_events"."refunded_cents" = $2::bigint
          and not "affiliate_sale_events"."needs_commission"
        returning "affiliate_sale_events"."id"),
      inserted as (
        insert into "refunds" ("sale_id", "commission_id", "idempotency_key", "refund_id", "requested_cents", "amount_cents", "refunded_total_cents", "deduction_cents", "reason", "refund_reason", "created_at")
        values ($1::bigint, $3::bigint, $4::text, $5::text,
                $6::bigint, $7::bigint, $8::bigint,
                $9::bigint, $10::text, $11::text, $12::timestamptz)
        returning "refunds"."id")
      select guard(exists (select 1 from updated), 'sale refunded meanwhile, or awaiting its commission') as ok,
             (select id from inserted) as refund_id;
END;
$kept$;
--> statement-breakpoint
CREATE OR REPLACE FUNCTION refund_deduction(bigint, bigint, bigint, text, timestamp with time zone)
RETURNS void
LANGUAGE plpgsql SET plan_cache_mode = force_generic_plan AS $kept$
#variable_conflict use_column
BEGIN
with owner as (
        select "commissions"."program_id", "commissions"."partner_id", "commissions"."currency" from "commissions" where "commissions"."id" = $1::bigint),
      ledger as (
        insert into "balance_ledger" ("program_id", "partner_id", "currency", "amount_cents", "cause", "commission_id", "refund_id", "created_at")
        select o."program_id", o."partner_id", o."currency", -$2::bigint, 'refund_deduction',
               $1::bigint, (select "refunds"."id" from "refunds" where "refunds"."sale_id" = $3::bigint and "refunds"."idempotency_key" = $4::text), $5::timestamptz
        from owner o),
      balance as (
        insert into "partner_balances" ("program_id", "partner_id", "currency", "balance_cents", "updated_at")
        select o."program_id", o."partner_id", o."currency", -$2::bigint, $5::timestamptz
        from owner o
        on conflict ("program_id", "partner_id", "currency") do update
          set "balance_cents" = "partner_balances"."balance_cents" + excluded."balance_cents",
              "updated_at" = excluded."updated_at"
        returning greatest("partner_balances"."balance_cents", 0) as available),
      open as (
        select "w"."id" as id, "w"."amount_cents" as amount_cents,
               sum("w"."amount_cents") over (order by "w"."created_at", "w"."id") - "w"."amount_cents" as before
        from "withdrawals" "w", owner o
        where "w"."program_id" = o."program_id" and "w"."partner_id" = o."partner_id"
          and "w"."currency" = o."currency" and "w"."status" = 'open'),
      fitted as (
        select open.id, least(open.amount_cents, greatest(0, balance.available - open.before)) as amount
        from open, balance)
      update "withdrawals" "w"
      set "amount_cents" = fitted.amount,
          "status" = case when fitted.amount = 0 then 'cancelled' else "w"."status" end,
          "updated_at" = $5::timestamptz
      from fitted
      where "w"."id" = fitted.id and fitted.amount <> "w"."amount_cents";
END;
$kept$;
