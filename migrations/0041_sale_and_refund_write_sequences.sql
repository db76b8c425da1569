-- The sale's and the refund's writes, each as one statement (lib/db/kept-plan-sequence.ts): write_sale runs
-- the sale write's kept-plan functions in order (the ids claimed, the customer, its click's provisional
-- leads settled, the sale, its commission and credit, the ids linked with the webhooks), write_refund the
-- refund's (the refund recorded, the commission's change, the deduction, the webhook). Each takes one jsonb
-- array of values per step, null for a step that does not run. A sale's write was up to seven statements of
-- one batch, a refund's four: each a query of its own for the SQL endpoint and PostgreSQL. The settling of
-- provisional leads, sent as text before, becomes a kept-plan function of its own (the server lead's write
-- runs it too, 0043); the other functions they call are unchanged.
CREATE OR REPLACE FUNCTION settle_provisional_leads(integer, text, timestamp with time zone, bigint, integer, text)
RETURNS void
LANGUAGE plpgsql SET plan_cache_mode = force_generic_plan SET enable_seqscan = off AS $kept$
#variable_conflict use_column
BEGIN
update "affiliate_lead_events"
      set "settled_at" = $3::timestamptz,
          "customer_id" =
            coalesce($4::bigint, (select "customers"."id" from "customers" where "customers"."program_id" = $5::int and "customers"."click_id" = $6::text))
      where "affiliate_lead_events"."program_id" = $1::int and "affiliate_lead_events"."click_id" = $2::text
        and "affiliate_lead_events"."provisional" and "affiliate_lead_events"."settled_at" is null and not "affiliate_lead_events"."is_test";
END;
$kept$;
--> statement-breakpoint
CREATE OR REPLACE FUNCTION write_sale(jsonb, jsonb, jsonb, jsonb, jsonb, jsonb, jsonb, jsonb, jsonb, jsonb)
RETURNS TABLE (sale_id bigint, commission_id bigint, linked boolean, enqueued integer)
LANGUAGE plpgsql SET plan_cache_mode = force_generic_plan AS $kept$
BEGIN
  IF $1 IS NOT NULL THEN
    PERFORM claim_payment_ids(($1->>0)::integer, ($1->>1)::text, ($1->>2)::text, ($1->>3)::json);
  END IF;
  IF $2 IS NOT NULL THEN
    PERFORM create_converted_customer(($2->>0)::integer, ($2->>1)::integer, ($2->>2)::text, ($2->>3)::timestamp with time zone, ($2->>4)::text, ($2->>5)::text, ($2->>6)::text, ($2->>7)::text, ($2->>8)::timestamp with time zone, ($2->>9)::timestamp with time zone, ($2->>10)::timestamp with time zone);
  END IF;
  IF $3 IS NOT NULL THEN
    PERFORM convert_customer(($3->>0)::bigint, ($3->>1)::timestamp with time zone, ($3->>2)::timestamp with time zone, ($3->>3)::text, ($3->>4)::text, ($3->>5)::text, ($3->>6)::timestamp with time zone);
  END IF;
  IF $4 IS NOT NULL THEN
    PERFORM settle_provisional_leads(($4->>0)::integer, ($4->>1)::text, ($4->>2)::timestamp with time zone, ($4->>3)::bigint, ($4->>4)::integer, ($4->>5)::text);
  END IF;
  IF $5 IS NOT NULL THEN
    PERFORM insert_sale(($5->>0)::text, ($5->>1)::integer, ($5->>2)::integer, ($5->>3)::bigint, ($5->>4)::bigint, ($5->>5)::text, ($5->>6)::text, ($5->>7)::jsonb, ($5->>8)::boolean, ($5->>9)::text, ($5->>10)::text, ($5->>11)::text, ($5->>12)::timestamp with time zone, ($5->>13)::text, ($5->>14)::text, ($5->>15)::boolean, ($5->>16)::text, ($5->>17)::boolean, ($5->>18)::boolean, ($5->>19)::timestamp with time zone);
  END IF;
  IF $6 IS NOT NULL THEN
    PERFORM insert_sale_of_customer(($6->>0)::text, ($6->>1)::integer, ($6->>2)::integer, ($6->>3)::bigint, ($6->>4)::bigint, ($6->>5)::text, ($6->>6)::text, ($6->>7)::jsonb, ($6->>8)::boolean, ($6->>9)::text, ($6->>10)::text, ($6->>11)::text, ($6->>12)::timestamp with time zone, ($6->>13)::text, ($6->>14)::text, ($6->>15)::boolean, ($6->>16)::text, ($6->>17)::boolean, ($6->>18)::boolean, ($6->>19)::timestamp with time zone, ($6->>20)::bigint);
  END IF;
  IF $7 IS NOT NULL THEN
    PERFORM insert_sale_of_new_customer(($7->>0)::text, ($7->>1)::integer, ($7->>2)::integer, ($7->>3)::bigint, ($7->>4)::bigint, ($7->>5)::text, ($7->>6)::text, ($7->>7)::jsonb, ($7->>8)::boolean, ($7->>9)::text, ($7->>10)::text, ($7->>11)::text, ($7->>12)::timestamp with time zone, ($7->>13)::text, ($7->>14)::text, ($7->>15)::boolean, ($7->>16)::text, ($7->>17)::boolean, ($7->>18)::boolean, ($7->>19)::timestamp with time zone, ($7->>20)::integer, ($7->>21)::text);
  END IF;
  IF $8 IS NOT NULL THEN
    PERFORM insert_sale_commission(($8->>0)::text, ($8->>1)::text, ($8->>2)::bigint, ($8->>3)::text, ($8->>4)::text, ($8->>5)::timestamp with time zone, ($8->>6)::timestamp with time zone, ($8->>7)::timestamp with time zone);
  END IF;
  IF $9 IS NOT NULL THEN
    PERFORM credit_sale_commission(($9->>0)::text, ($9->>1)::text, ($9->>2)::timestamp with time zone);
  END IF;
  IF $10 IS NOT NULL THEN
    RETURN QUERY SELECT * FROM link_payment_ids_and_enqueue_webhooks(($10->>0)::text, ($10->>1)::text, ($10->>2)::json, ($10->>3)::timestamp with time zone);
  END IF;
END;
$kept$;
--> statement-breakpoint
CREATE OR REPLACE FUNCTION write_refund(jsonb, jsonb, jsonb, jsonb)
RETURNS TABLE (ok boolean, refund_id bigint)
LANGUAGE plpgsql SET plan_cache_mode = force_generic_plan AS $kept$
BEGIN
  IF $1 IS NOT NULL THEN
    RETURN QUERY SELECT * FROM record_refund(($1->>0)::bigint, ($1->>1)::bigint, ($1->>2)::bigint, ($1->>3)::text, ($1->>4)::text, ($1->>5)::bigint, ($1->>6)::bigint, ($1->>7)::bigint, ($1->>8)::bigint, ($1->>9)::text, ($1->>10)::text, ($1->>11)::timestamp with time zone);
  END IF;
  IF $2 IS NOT NULL THEN
    PERFORM refund_commission(($2->>0)::bigint, ($2->>1)::integer, ($2->>2)::text, ($2->>3)::bigint, ($2->>4)::text, ($2->>5)::boolean, ($2->>6)::timestamp with time zone);
  END IF;
  IF $3 IS NOT NULL THEN
    PERFORM refund_deduction(($3->>0)::bigint, ($3->>1)::bigint, ($3->>2)::bigint, ($3->>3)::text, ($3->>4)::timestamp with time zone);
  END IF;
  IF $4 IS NOT NULL THEN
    PERFORM enqueue_commission_refunded_webhook(($4->>0)::bigint, ($4->>1)::bigint, ($4->>2)::text, ($4->>3)::timestamp with time zone);
  END IF;
END;
$kept$;
