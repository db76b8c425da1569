-- The refund write's statements as PL/pgSQL functions (lib/db/kept-plan.ts), as 0026 did for the click's: the
-- sale's guarded refunded amount, the refund row, the guarded commission change, the deduction's ledger row,
-- balance and withdrawals, the commission.updated webhook and the read of the refund row's id. PostgreSQL parses
-- and plans them once per connection instead of on every refund. The TypeScript statements in
-- lib/refunds/refund-store.ts are the source (test/node/kept-plans.test.ts; `npm run db:kept-plans`).
CREATE OR REPLACE FUNCTION refund_sale_amount(bigint, bigint, bigint)
RETURNS TABLE (ok boolean)
LANGUAGE plpgsql AS $kept$
#variable_conflict use_column
BEGIN
  RETURN QUERY
with updated as (
        update "affiliate_sale_events" set "refunded_cents" = $3::bigint
        where "affiliate_sale_events"."id" = $1::bigint and "affiliate_sale_events"."refunded_cents" = $2::bigint
          and not "affiliate_sale_events"."needs_commission"
        returning "affiliate_sale_events"."id")
      select guard(exists (select 1 from updated), 'sale refunded meanwhile, or awaiting its commission');
END;
$kept$;
--> statement-breakpoint
CREATE OR REPLACE FUNCTION insert_refund(bigint, bigint, text, text, bigint, bigint, bigint, bigint, text, text, timestamp with time zone)
RETURNS void
LANGUAGE plpgsql AS $kept$
#variable_conflict use_column
BEGIN
insert into "refunds" ("sale_id", "commission_id", "idempotency_key", "refund_id", "requested_cents", "amount_cents", "refunded_total_cents", "deduction_cents", "reason", "refund_reason", "created_at")
      values ($1::bigint, $2::bigint, $3::text, $4::text,
              $5::bigint, $6::bigint, $7::bigint,
              $8::bigint, $9::text, $10::text, $11::timestamptz);
END;
$kept$;
--> statement-breakpoint
CREATE OR REPLACE FUNCTION refund_commission(bigint, integer, text, bigint, text, boolean, timestamp with time zone)
RETURNS TABLE (ok boolean)
LANGUAGE plpgsql AS $kept$
#variable_conflict use_column
BEGIN
  RETURN QUERY
with updated as (
        update "commissions"
        set "status" = $3::text, "deducted_cents" = $4::bigint,
            "refund_reason" = $5::text,
            "needs_manual_review" = "commissions"."needs_manual_review" or $6::boolean,
            "paid_out_at" =
              case when "commissions"."status" = 'paid' then coalesce("commissions"."paid_out_at", $7::timestamptz) else "commissions"."paid_out_at" end,
            "version" = "commissions"."version" + 1, "updated_at" = $7::timestamptz
        where "commissions"."id" = $1::bigint and "commissions"."version" = $2::int
        returning "commissions"."id")
      select guard(exists (select 1 from updated), 'commission changed meanwhile');
END;
$kept$;
--> statement-breakpoint
CREATE OR REPLACE FUNCTION refund_deduction_ledger(bigint, bigint, bigint, text, timestamp with time zone)
RETURNS void
LANGUAGE plpgsql AS $kept$
#variable_conflict use_column
BEGIN
insert into "balance_ledger" ("program_id", "partner_id", "currency", "amount_cents", "cause", "commission_id", "refund_id", "created_at")
      select o."program_id", o."partner_id", o."currency", -$2::bigint, 'refund_deduction',
             $1::bigint, (select "refunds"."id" from "refunds" where "refunds"."sale_id" = $3::bigint and "refunds"."idempotency_key" = $4::text), $5::timestamptz
      from (select "commissions"."program_id", "commissions"."partner_id", "commissions"."currency" from "commissions" where "commissions"."id" = $1::bigint) o;
END;
$kept$;
--> statement-breakpoint
CREATE OR REPLACE FUNCTION refund_deduction_balance(bigint, bigint, bigint, text, timestamp with time zone)
RETURNS void
LANGUAGE plpgsql AS $kept$
#variable_conflict use_column
BEGIN
insert into "partner_balances" ("program_id", "partner_id", "currency", "balance_cents", "updated_at")
      select o."program_id", o."partner_id", o."currency", -$2::bigint, $5::timestamptz
      from (select "commissions"."program_id", "commissions"."partner_id", "commissions"."currency" from "commissions" where "commissions"."id" = $1::bigint) o
      on conflict ("program_id", "partner_id", "currency") do update
        set "balance_cents" = "partner_balances"."balance_cents" + excluded."balance_cents",
            "updated_at" = excluded."updated_at";
END;
$kept$;
--> statement-breakpoint
CREATE OR REPLACE FUNCTION refund_deduction_withdrawals(bigint, bigint, bigint, text, timestamp with time zone)
RETURNS void
LANGUAGE plpgsql AS $kept$
#variable_conflict use_column
BEGIN
with owner as (select "commissions"."program_id", "commissions"."partner_id", "commissions"."currency" from "commissions" where "commissions"."id" = $1::bigint),
      balance as (
        select greatest("b"."balance_cents", 0) as available
        from "partner_balances" "b", owner o
        where "b"."program_id" = o."program_id" and "b"."partner_id" = o."partner_id" and "b"."currency" = o."currency"),
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
--> statement-breakpoint
CREATE OR REPLACE FUNCTION enqueue_commission_refunded_webhook(bigint, bigint, text, timestamp with time zone)
RETURNS TABLE (enqueued integer)
LANGUAGE plpgsql AS $kept$
#variable_conflict use_column
BEGIN
  RETURN QUERY
select webhook_enqueue("c"."program_id", 'commission.updated', 'commission.updated:refund:' || "r"."id",
             jsonb_build_object(
  'commission_id', "c"."id", 'sale_id', "c"."sale_id", 'program_id', "c"."program_id", 'partner_id', "c"."partner_id",
  'status', "c"."status", 'amount_cents', "c"."amount_cents", 'deducted_cents', "c"."deducted_cents",
  'net_amount_cents', "c"."amount_cents" - "c"."deducted_cents", 'currency', "c"."currency", 'hold_until', "c"."hold_until",
  'is_test', "c"."is_test") || jsonb_build_object('reason', "r"."reason", 'refund', jsonb_build_object(
               'refund_id', "r"."refund_id", 'amount_cents', "r"."amount_cents",
               'refunded_total_cents', "r"."refunded_total_cents", 'deduction_cents', "r"."deduction_cents")),
             $4::timestamptz)
    from "commissions" "c", "refunds" "r" where "c"."id" = $1::bigint and "r"."id" = (select "refunds"."id" from "refunds" where "refunds"."sale_id" = $2::bigint and "refunds"."idempotency_key" = $3::text);
END;
$kept$;
--> statement-breakpoint
CREATE OR REPLACE FUNCTION read_refund_row_id(bigint, text)
RETURNS TABLE (refund_id bigint)
LANGUAGE plpgsql AS $kept$
#variable_conflict use_column
BEGIN
  RETURN QUERY
select (select "refunds"."id" from "refunds" where "refunds"."sale_id" = $1::bigint and "refunds"."idempotency_key" = $2::text) as refund_id;
END;
$kept$;
