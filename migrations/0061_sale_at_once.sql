-- The common sale decided and written in the database in one round trip (lib/tracking/sale/sale-at-once.ts): the
-- sale's read, the rules such a sale meets, and the sale's write, each step its kept-plan function; any other
-- case answers the facts read, for the rules in TypeScript. record_sales_at_once runs it per item of the
-- isolate's group commit, each item in a subtransaction of its own, in the order of the partners the sales would
-- credit (sale_lock_order), as write_sales and write_refunds lock partners' balances.
CREATE OR REPLACE FUNCTION sale_lock_order(text, text, text)
RETURNS TABLE (partner_id integer)
LANGUAGE plpgsql SET plan_cache_mode = force_generic_plan SET enable_seqscan = off AS $kept$
#variable_conflict use_column
BEGIN
  RETURN QUERY
select coalesce(
      (select "c"."partner_id" from "customers" "c"
       where "c"."customer_key" = $2::text and "c"."program_id" = (select "program_api_keys"."program_id" from "program_api_keys" where "program_api_keys"."key_hash" = $1::text and "program_api_keys"."revoked_at" is null)),
      (select coalesce("o"."partner_id", "k"."partner_id") from "affiliate_click_events" "k"
       left join "affiliate_click_events" "o" on "o"."click_id" = "k"."visitor_click_id"
       where "k"."click_id" = $3::text)) as partner_id;
END;
$kept$;
--> statement-breakpoint
CREATE OR REPLACE FUNCTION record_sale_at_once(jsonb)
RETURNS TABLE (sale_written boolean, sale_id bigint, commission_id bigint, commission_cents bigint, facts_key json, facts_program json, facts_recorded_sales json, facts_customer_by_key json, facts_click json)
LANGUAGE plpgsql SET plan_cache_mode = force_generic_plan AS $kept$
DECLARE
  key_hash text := ($1->>0)::text;
  transaction_id text := ($1->>1)::text;
  customer_key text := ($1->>2)::text;
  click_id text := ($1->>3)::text;
  product_id text := ($1->>4)::text;
  amount_cents bigint := ($1->>5)::bigint;
  tax_cents bigint := ($1->>6)::bigint;
  currency text := ($1->>7)::text;
  currency_exponent integer := ($1->>8)::integer;
  sale_type text := ($1->>9)::text;
  line_items jsonb := ($1->>10)::jsonb;
  is_recurring boolean := ($1->>11)::boolean;
  subscription_id text := ($1->>12)::text;
  subscription_interval text := ($1->>13)::text;
  occurred_at timestamp with time zone := ($1->>14)::timestamp with time zone;
  provider text := ($1->>15)::text;
  provider_payment_id text := ($1->>16)::text;
  livemode boolean := ($1->>17)::boolean;
  now_at timestamp with time zone := ($1->>18)::timestamp with time zone;
  facts record;
  customer json;
  program_id integer;
  partner_id integer;
  clicked_at timestamptz;
  policy_type text;
  policy_rate numeric;
  policy_duration integer;
  eligible boolean;
  rate numeric;
  cents numeric;
  hold_days integer;
  finished record;
BEGIN
  SELECT * INTO facts FROM read_sale_facts(key_hash, transaction_id, customer_key, click_id, product_id);
  facts_key := facts.key;
  facts_program := facts.program;
  facts_recorded_sales := facts.recorded_sales;
  facts_customer_by_key := facts.customer_by_key;
  facts_click := facts.click;
  sale_written := false;
  <<decided>>
  BEGIN
    -- The key: live, and not retired (one marked for rotation still pays).
    IF facts.key IS NULL OR facts.program IS NULL OR (facts.key->>'is_test')::boolean THEN EXIT decided; END IF;
    IF date_trunc('milliseconds', (facts.key->>'rotate_by')::timestamptz) <= now_at THEN EXIT decided; END IF;
    program_id := (facts.program->>'id')::integer;
    -- Not recorded yet (the 409 names the recorded sale: decided in TypeScript).
    IF EXISTS (SELECT 1 FROM json_array_elements(facts.recorded_sales) AS recorded(sale)
               WHERE recorded.sale->>'id_namespace' = 'live') THEN EXIT decided; END IF;
    -- The customer: by customer_key, else the click's (its original click's) customer, else a new one.
    IF facts.customer_by_key IS NOT NULL THEN
      customer := facts.customer_by_key;
    ELSE
      IF facts.click IS NULL OR (facts.click->>'is_test')::boolean
         OR (facts.click->>'program_id')::integer <> program_id THEN EXIT decided; END IF;
      IF json_typeof(facts.click->'customer') = 'object' THEN customer := facts.click->'customer'; END IF;
    END IF;
    IF customer IS NOT NULL THEN
      partner_id := (customer->>'partner_id')::integer;
      clicked_at := date_trunc('milliseconds', (customer->>'clicked_at')::timestamptz);
      IF partner_id IS NULL OR NOT (customer->>'partner_is_member')::boolean THEN EXIT decided; END IF;
    ELSE
      partner_id := (facts.click->>'partner_id')::integer;
      clicked_at := date_trunc('milliseconds', (facts.click->>'created_at')::timestamptz);
      IF partner_id IS NULL OR NOT (facts.click->>'partner_is_member')::boolean THEN EXIT decided; END IF;
    END IF;
    -- Until the first conversion the click must be within the window of the signup, or of this payment.
    IF customer->>'first_converted_at' IS NULL AND clicked_at IS NOT NULL
       AND extract(epoch FROM coalesce(date_trunc('milliseconds', (customer->>'signed_up_at')::timestamptz), now_at)) - extract(epoch FROM clicked_at)
           > (facts.program->>'attribution_window_days')::integer * 86400 THEN EXIT decided; END IF;
    -- The terms: the product's rule, else the program's (a rule without a duration takes the program's).
    IF facts.program->>'rule_id' IS NOT NULL THEN
      policy_type := facts.program->>'rule_type';
      policy_rate := (facts.program->>'rule_rate')::numeric;
      policy_duration := coalesce((facts.program->>'rule_duration')::integer, (facts.program->>'duration_months')::integer);
    ELSE
      policy_type := facts.program->>'commission_type';
      policy_rate := (facts.program->>'commission_rate')::numeric;
      policy_duration := (facts.program->>'duration_months')::integer;
    END IF;
    -- One-time terms pay the first commissioned sale only; recurring ones for life here (a period that may
    -- have ended is decided in TypeScript).
    IF customer->>'first_commission_at' IS NULL THEN
      eligible := true;
    ELSIF policy_type NOT IN ('recurring_percent', 'recurring_fixed') THEN
      eligible := false;
    ELSIF policy_duration = 0 THEN
      eligible := true;
    ELSE
      EXIT decided;
    END IF;
    IF eligible THEN
      -- commissionAmount: the rate in ten-thousandths, rounded half up to the minor unit.
      rate := trunc(policy_rate * 10000);
      IF policy_type IN ('percent', 'recurring_percent') THEN
        cents := div(amount_cents * rate * 2 + 1000000, 2000000);
      ELSE
        cents := div(rate * (10::numeric ^ currency_exponent) * 2 + 10000, 20000);
      END IF;
      IF cents > 9007199254740991 THEN EXIT decided; END IF;
      commission_cents := cents;
    END IF;
    hold_days := (facts.program->>'hold_days')::integer;

    IF customer IS NULL THEN
      PERFORM create_converted_customer(program_id, partner_id, facts.click->>'click_id', clicked_at, NULL, NULL,
        NULL, NULL, NULL, CASE WHEN eligible THEN now_at END, now_at);
      PERFORM insert_sale_of_new_customer(transaction_id, program_id, partner_id, amount_cents, tax_cents, currency, sale_type, line_items, is_recurring, subscription_id, subscription_interval, product_id, occurred_at, provider, provider_payment_id, livemode, 'api', false, false, now_at, program_id, facts.click->>'click_id');
    ELSE
      IF customer->>'first_converted_at' IS NULL OR customer->>'first_commission_at' IS NULL THEN
        PERFORM convert_customer((customer->>'id')::bigint, date_trunc('milliseconds', (customer->>'first_commission_at')::timestamptz),
          CASE WHEN eligible THEN now_at END, NULL, NULL, NULL, now_at);
      END IF;
      PERFORM insert_sale_of_customer(transaction_id, program_id, partner_id, amount_cents, tax_cents, currency, sale_type, line_items, is_recurring, subscription_id, subscription_interval, product_id, occurred_at, provider, provider_payment_id, livemode, 'api', false, false, now_at, (customer->>'id')::bigint);
    END IF;
    IF eligible THEN
      PERFORM insert_sale_commission(transaction_id, 'live', commission_cents, currency,
        CASE WHEN hold_days > 0 THEN 'pending' ELSE 'approved' END,
        CASE WHEN hold_days > 0 THEN now_at + hold_days * interval '24 hours' END,
        CASE WHEN hold_days > 0 THEN NULL ELSE now_at END, now_at);
      IF hold_days <= 0 THEN PERFORM credit_sale_commission(transaction_id, 'live', now_at); END IF;
    END IF;
    SELECT * INTO finished FROM link_payment_ids_and_enqueue_webhooks(transaction_id, 'live', json_build_array(transaction_id), now_at);
    sale_id := finished.sale_id;
    commission_id := finished.commission_id;
    sale_written := true;
  END;
  RETURN NEXT;
END;
$kept$;
--> statement-breakpoint
CREATE OR REPLACE FUNCTION record_sales_at_once(jsonb)
RETURNS TABLE (batch_item integer, failed_code text, failed_message text, failed_constraint text, sale_written boolean, sale_id bigint, commission_id bigint, commission_cents bigint, facts_key json, facts_program json, facts_recorded_sales json, facts_customer_by_key json, facts_click json)
LANGUAGE plpgsql SET plan_cache_mode = force_generic_plan AS $kept$
DECLARE
  item jsonb;
  written record;
BEGIN
  FOR item, batch_item IN SELECT e.value, (e.n - 1)::integer
    FROM jsonb_array_elements($1) WITH ORDINALITY AS e(value, n)
    ORDER BY (SELECT guess.partner_id FROM sale_lock_order(e.value->0->>0, e.value->0->>2, e.value->0->>3) guess), e.n LOOP
    BEGIN
      SELECT * INTO STRICT written FROM record_sale_at_once(nullif(item->0, 'null'));
      RETURN QUERY SELECT batch_item, NULL::text, NULL::text, NULL::text, written.sale_written, written.sale_id, written.commission_id, written.commission_cents, written.facts_key, written.facts_program, written.facts_recorded_sales, written.facts_customer_by_key, written.facts_click;
    EXCEPTION WHEN OTHERS THEN
      GET STACKED DIAGNOSTICS failed_code = RETURNED_SQLSTATE, failed_message = MESSAGE_TEXT,
                              failed_constraint = CONSTRAINT_NAME;
      RETURN QUERY SELECT batch_item, failed_code, failed_message, nullif(failed_constraint, ''), NULL::boolean, NULL::bigint, NULL::bigint, NULL::bigint, NULL::json, NULL::json, NULL::json, NULL::json, NULL::json;
    END;
  END LOOP;
END;
$kept$;
