-- The common refund decided and written in the database in one round trip (lib/refunds/refund-at-once.ts): the
-- refund's read, the commission state table of decideRefund, and the refund's write with its notifications, each
-- step its kept-plan function; any other case answers the facts read, for the rules in TypeScript.
-- record_refunds_at_once runs it per item of the isolate's group commit, each item in a subtransaction of its
-- own, in the order of the partners the refunds would take from (refund_lock_order), as write_refunds does.
CREATE OR REPLACE FUNCTION refund_lock_order(text, text)
RETURNS TABLE (partner_id integer)
LANGUAGE plpgsql SET plan_cache_mode = force_generic_plan SET enable_seqscan = off AS $kept$
#variable_conflict use_column
BEGIN
  RETURN QUERY
select "m"."partner_id" as partner_id from "affiliate_sale_events" "s" join "commissions" "m" on "m"."sale_id" = "s"."id"
    where ("s"."program_id" = (select "program_api_keys"."program_id" from "program_api_keys" where "program_api_keys"."key_hash" = $1::text and "program_api_keys"."revoked_at" is null)) is true
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
--> statement-breakpoint
CREATE OR REPLACE FUNCTION record_refund_at_once(jsonb)
RETURNS TABLE (refund_written boolean, refund_status text, deduction_cents bigint, commission_id bigint, facts_key json, facts_sale json)
LANGUAGE plpgsql SET plan_cache_mode = force_generic_plan AS $kept$
DECLARE
  key_hash text := ($1->>0)::text;
  transaction_id text := ($1->>1)::text;
  repeat_key text := ($1->>2)::text;
  repeat_amount_cents bigint := ($1->>3)::bigint;
  intent_amount_cents bigint := ($1->>4)::bigint;
  requested_cents bigint := ($1->>5)::bigint;
  refund_id text := ($1->>6)::text;
  reason text := ($1->>7)::text;
  recorded_reason text := ($1->>8)::text;
  now_at timestamp with time zone := ($1->>9)::timestamp with time zone;
  facts record;
  commission json;
  sale_id bigint;
  sale_amount numeric;
  refunded numeric;
  applied numeric;
  new_refunded numeric;
  commission_amount numeric;
  deducted numeric;
  target numeric;
  new_deducted numeric;
  balance_deduction numeric;
  credited boolean;
  payload jsonb;
BEGIN
  SELECT * INTO facts FROM read_refund_and_repeats(key_hash, transaction_id, repeat_key, repeat_amount_cents);
  facts_key := facts.key;
  facts_sale := facts.sale;
  refund_written := false;
  <<decided>>
  BEGIN
    -- A live key, not retired, and its program's sale.
    IF facts.key IS NULL OR facts.sale IS NULL OR (facts.key->>'is_test')::boolean THEN EXIT decided; END IF;
    IF date_trunc('milliseconds', (facts.key->>'rotate_by')::timestamptz) <= now_at THEN EXIT decided; END IF;
    IF json_typeof(facts.sale->'commission') = 'object' THEN commission := facts.sale->'commission'; END IF;
    -- Skipped (reversed, or a repeat: the read answers only the refunds this one repeats) or awaiting repair.
    IF commission->>'status' = 'reversed' OR (facts.sale->>'needs_commission')::boolean
       OR json_array_length(facts.sale->'refunds') > 0 THEN EXIT decided; END IF;
    sale_id := (facts.sale->>'id')::bigint;
    sale_amount := (facts.sale->>'amount_cents')::numeric;
    refunded := (facts.sale->>'refunded_cents')::numeric;
    -- Omitted or 0: everything left.
    applied := CASE WHEN coalesce(intent_amount_cents, 0) = 0 THEN sale_amount - refunded
                    ELSE least(intent_amount_cents, sale_amount - refunded) END;
    new_refunded := refunded + applied;
    IF commission IS NULL OR (commission->>'is_test')::boolean THEN
      IF applied = 0 THEN EXIT decided; END IF;
      PERFORM record_refund(sale_id, refunded::bigint, NULL, repeat_key, refund_id, requested_cents,
        applied::bigint, new_refunded::bigint, 0, reason, recorded_reason, now_at);
      refund_status := 'no_commission';
    ELSE
      commission_id := (commission->>'id')::bigint;
      commission_amount := (commission->>'amount_cents')::numeric;
      deducted := (commission->>'deducted_cents')::numeric;
      credited := (commission->>'credited')::boolean;
      target := CASE WHEN new_refunded >= sale_amount THEN commission_amount ELSE div(2 * commission_amount * new_refunded + sale_amount, 2 * sale_amount) END;
      -- A pending commission is cancelled whole on any refund: nothing was credited, so nothing is taken.
      new_deducted := CASE WHEN commission->>'status' = 'pending' THEN commission_amount ELSE greatest(target, deducted) END;
      refund_status := CASE WHEN new_refunded >= sale_amount THEN 'reversed' ELSE 'refunded' END;
      balance_deduction := CASE WHEN credited THEN new_deducted - deducted ELSE 0 END;
      deduction_cents := CASE WHEN credited THEN new_deducted - deducted
                              ELSE greatest(0, target - CASE WHEN refunded >= sale_amount THEN commission_amount ELSE div(2 * commission_amount * refunded + sale_amount, 2 * sale_amount) END) END;
      PERFORM record_refund(sale_id, refunded::bigint, commission_id, repeat_key, refund_id,
        requested_cents, applied::bigint, new_refunded::bigint, balance_deduction::bigint, reason, recorded_reason, now_at);
      PERFORM refund_commission(commission_id, (commission->>'version')::integer, refund_status,
        new_deducted::bigint, recorded_reason, (commission->>'paid_out')::boolean, now_at);
      IF balance_deduction > 0 THEN
        PERFORM refund_deduction(commission_id, balance_deduction::bigint, sale_id, repeat_key, now_at);
      END IF;
      PERFORM enqueue_commission_refunded_webhook(commission_id, sale_id, repeat_key, now_at);
      -- refundNotifications: the partner's, and the advertiser's review of a paid-out commission.
      IF commission->>'partner_id' IS NOT NULL THEN
        payload := jsonb_build_object('commission_id', commission_id, 'status', refund_status,
          'deduction_cents', deduction_cents, 'currency', facts.sale->>'currency', 'reason', recorded_reason);
        PERFORM insert_refund_notifications(
          jsonb_build_array(jsonb_build_object('recipient_type', 'partner',
            'recipient_id', (commission->>'partner_id')::integer, 'program_id', (facts.sale->>'program_id')::integer,
            'kind', 'commission_' || refund_status, 'payload', payload))
          || CASE WHEN (commission->>'paid_out')::boolean THEN
               jsonb_build_array(jsonb_build_object('recipient_type', 'advertiser',
                 'recipient_id', (facts.sale->>'advertiser_id')::integer, 'program_id', (facts.sale->>'program_id')::integer,
                 'kind', 'paid_commission_reversed_review',
                 'payload', payload || jsonb_build_object('partner_id', (commission->>'partner_id')::integer,
                   'action', 'Review this paid-out commission manually.')))
             ELSE '[]'::jsonb END,
          sale_id, repeat_key, now_at);
      END IF;
    END IF;
    refund_written := true;
  END;
  RETURN NEXT;
END;
$kept$;
--> statement-breakpoint
CREATE OR REPLACE FUNCTION record_refunds_at_once(jsonb)
RETURNS TABLE (batch_item integer, failed_code text, failed_message text, failed_constraint text, refund_written boolean, refund_status text, deduction_cents bigint, commission_id bigint, facts_key json, facts_sale json)
LANGUAGE plpgsql SET plan_cache_mode = force_generic_plan AS $kept$
DECLARE
  item jsonb;
  written record;
BEGIN
  FOR item, batch_item IN SELECT e.value, (e.n - 1)::integer
    FROM jsonb_array_elements($1) WITH ORDINALITY AS e(value, n)
    ORDER BY (SELECT guess.partner_id FROM refund_lock_order(e.value->0->>0, e.value->0->>1) guess), e.n LOOP
    BEGIN
      SELECT * INTO STRICT written FROM record_refund_at_once(nullif(item->0, 'null'));
      RETURN QUERY SELECT batch_item, NULL::text, NULL::text, NULL::text, written.refund_written, written.refund_status, written.deduction_cents, written.commission_id, written.facts_key, written.facts_sale;
    EXCEPTION WHEN OTHERS THEN
      GET STACKED DIAGNOSTICS failed_code = RETURNED_SQLSTATE, failed_message = MESSAGE_TEXT,
                              failed_constraint = CONSTRAINT_NAME;
      RETURN QUERY SELECT batch_item, failed_code, failed_message, nullif(failed_constraint, ''), NULL::boolean, NULL::text, NULL::bigint, NULL::bigint, NULL::json, NULL::json;
    END;
  END LOOP;
END;
$kept$;
