-- The common lead decided and written in the database in one round trip (lib/tracking/lead/lead-at-once.ts): the
-- lead's read, the rules of decideLead a live lead naming its click meets, and the lead's write (the customer
-- created or promoted, the click's provisional leads settled, the event with its webhook; or the guarded
-- provisional event), each step its kept-plan function; any other case answers the facts read, for the rules in
-- TypeScript. record_leads_at_once runs it per item of the isolate's group commit, each item in a subtransaction
-- of its own, as write_leads does.
CREATE OR REPLACE FUNCTION record_leads_at_once(jsonb)
RETURNS TABLE (batch_item integer, failed_code text, failed_message text, failed_constraint text, lead_written text, lead_event_id bigint, lead_partner_id integer, lead_click_id text, promoted_customer_id bigint, facts_api_key json, facts_click json, facts_customer_by_click json, facts_customer_by_key json, facts_programs json)
LANGUAGE plpgsql SET plan_cache_mode = force_generic_plan AS $kept$
DECLARE
  item jsonb;
  written record;
BEGIN
  batch_item := 0;
  FOR item IN SELECT * FROM jsonb_array_elements($1) LOOP
    BEGIN
      SELECT * INTO STRICT written FROM record_lead_at_once(nullif(item->0, 'null'));
      RETURN QUERY SELECT batch_item, NULL::text, NULL::text, NULL::text, written.lead_written, written.lead_event_id, written.lead_partner_id, written.lead_click_id, written.promoted_customer_id, written.facts_api_key, written.facts_click, written.facts_customer_by_click, written.facts_customer_by_key, written.facts_programs;
    EXCEPTION WHEN OTHERS THEN
      GET STACKED DIAGNOSTICS failed_code = RETURNED_SQLSTATE, failed_message = MESSAGE_TEXT,
                              failed_constraint = CONSTRAINT_NAME;
      RETURN QUERY SELECT batch_item, failed_code, failed_message, nullif(failed_constraint, ''), NULL::text, NULL::bigint, NULL::integer, NULL::text, NULL::bigint, NULL::json, NULL::json, NULL::json, NULL::json, NULL::json;
    END;
    batch_item := batch_item + 1;
  END LOOP;
END;
$kept$;
--> statement-breakpoint
CREATE OR REPLACE FUNCTION record_lead_at_once(jsonb)
RETURNS TABLE (lead_written text, lead_event_id bigint, lead_partner_id integer, lead_click_id text, promoted_customer_id bigint, facts_api_key json, facts_click json, facts_customer_by_click json, facts_customer_by_key json, facts_programs json)
LANGUAGE plpgsql SET plan_cache_mode = force_generic_plan AS $kept$
DECLARE
  key_hash text := ($1->>0)::text;
  click_id text := ($1->>1)::text;
  customer_key text := ($1->>2)::text;
  explicit_program_id integer := ($1->>3)::integer;
  requested_program_id integer := ($1->>4)::integer;
  email_hash text := ($1->>5)::text;
  email_masked text := ($1->>6)::text;
  event_name text := ($1->>7)::text;
  ip_hash text := ($1->>8)::text;
  ua_hash text := ($1->>9)::text;
  now_at timestamp with time zone := ($1->>10)::timestamp with time zone;
  facts record;
  customer json;
  key_program_id integer;
  program_id integer;
  partner_id integer;
  lead_auth_policy text;
  written record;
BEGIN
  SELECT * INTO facts FROM read_lead_facts(key_hash, click_id, customer_key, explicit_program_id);
  facts_api_key := facts.api_key;
  facts_click := facts.click;
  facts_customer_by_click := facts.customer_by_click;
  facts_customer_by_key := facts.customer_by_key;
  facts_programs := facts.programs;
  <<decided>>
  BEGIN
    -- With a key (the brand's server): live, and not retired (one marked for rotation still counts).
    IF key_hash IS NOT NULL THEN
      IF facts.api_key IS NULL OR (facts.api_key->>'is_test')::boolean THEN EXIT decided; END IF;
      IF date_trunc('milliseconds', (facts.api_key->>'rotate_by')::timestamptz) <= now_at THEN EXIT decided; END IF;
      key_program_id := (facts.api_key->>'program_id')::integer;
    END IF;
    -- The click: live, of the key's program (or, from the browser, of the program_id sent).
    IF click_id IS NULL OR facts.click IS NULL OR (facts.click->>'is_test')::boolean THEN EXIT decided; END IF;
    program_id := (facts.click->>'program_id')::integer;
    IF program_id <> key_program_id THEN EXIT decided; END IF;
    IF key_hash IS NULL AND program_id <> requested_program_id THEN EXIT decided; END IF;
    -- The customer of the click: none yet, or one nobody has signed up; no other customer holds the key.
    customer := facts.customer_by_click;
    IF customer->>'status' <> 'clicked' THEN EXIT decided; END IF;
    IF customer_key IS NOT NULL AND facts.customer_by_key IS NOT NULL
       AND (customer IS NULL OR facts.customer_by_key->>'id' <> customer->>'id') THEN EXIT decided; END IF;
    SELECT program->>'lead_auth_policy' INTO lead_auth_policy
    FROM json_array_elements(facts.programs) AS programs(program)
    WHERE (program->>'id')::integer = program_id;
    IF lead_auth_policy IS NULL THEN EXIT decided; END IF;
    -- A customer keeps the partner it was bound to; a new one gets the original click's (first click).
    partner_id := coalesce((customer->>'partner_id')::integer, (facts.click->>'partner_id')::integer);
    lead_click_id := facts.click->>'click_id';

    IF key_hash IS NULL AND lead_auth_policy = 'server_required' THEN
      SELECT * INTO written FROM record_provisional_lead_event(program_id, partner_id, lead_click_id, customer_key, email_hash, email_masked, event_name, true, NULL, key_hash IS NOT NULL, ip_hash, ua_hash, false, now_at,
        program_id, lead_click_id, customer_key);
      lead_written := 'provisional';
    ELSIF customer IS NULL THEN
      PERFORM create_lead_customer(program_id, partner_id, lead_click_id,
        date_trunc('milliseconds', (facts.click->>'clicked_at')::timestamptz), customer_key, email_hash, email_masked, now_at);
      PERFORM settle_provisional_leads(program_id, lead_click_id, now_at, NULL, program_id, lead_click_id);
      SELECT * INTO written FROM record_lead_event_of_new_customer(program_id, partner_id, lead_click_id, customer_key, email_hash, email_masked, event_name, false, now_at, key_hash IS NOT NULL, ip_hash, ua_hash, false, now_at,
        program_id, lead_click_id);
      lead_written := 'settled';
    ELSE
      promoted_customer_id := (customer->>'id')::bigint;
      PERFORM promote_customer_to_lead((customer->>'id')::bigint, customer_key, email_hash,
        email_masked, now_at);
      PERFORM settle_provisional_leads(program_id, lead_click_id, now_at, (customer->>'id')::bigint,
        NULL, NULL);
      SELECT * INTO written FROM record_lead_event_of_customer(program_id, partner_id, lead_click_id, customer_key, email_hash, email_masked, event_name, false, now_at, key_hash IS NOT NULL, ip_hash, ua_hash, false, now_at,
        (customer->>'id')::bigint);
      lead_written := 'settled';
    END IF;
    lead_event_id := written.id;
    lead_partner_id := partner_id;
  END;
  RETURN NEXT;
END;
$kept$;
