-- Provisional browser leads arriving at one isolate while one is being written go together as one statement
-- and one transaction, as server leads, sales and refunds do since 0048 (lib/db/group-committed-write.ts):
-- write_provisional_lead runs the guarded event insert (record_provisional_lead_event, 0040, last redefined
-- in 0049) as a sequence of its one step, and write_provisional_leads runs it once per item of a JSON array,
-- each item in a subtransaction of its own, returning each item's row or the error that rolled it back alone.
-- Workers deployed before this migration never call them, and record_provisional_lead_event is unchanged.
CREATE OR REPLACE FUNCTION write_provisional_lead(jsonb)
RETURNS TABLE (id bigint, enqueued integer)
LANGUAGE plpgsql SET plan_cache_mode = force_generic_plan AS $kept$
BEGIN
  IF $1 IS NOT NULL THEN
    RETURN QUERY SELECT * FROM record_provisional_lead_event(($1->>0)::integer, ($1->>1)::integer, ($1->>2)::text, ($1->>3)::text, ($1->>4)::text, ($1->>5)::text, ($1->>6)::text, ($1->>7)::boolean, ($1->>8)::timestamp with time zone, ($1->>9)::boolean, ($1->>10)::text, ($1->>11)::text, ($1->>12)::boolean, ($1->>13)::timestamp with time zone, ($1->>14)::integer, ($1->>15)::text, ($1->>16)::text);
  END IF;
END;
$kept$;
--> statement-breakpoint
CREATE OR REPLACE FUNCTION write_provisional_leads(jsonb)
RETURNS TABLE (batch_item integer, failed_code text, failed_message text, failed_constraint text, id bigint, enqueued integer)
LANGUAGE plpgsql SET plan_cache_mode = force_generic_plan AS $kept$
DECLARE
  item jsonb;
  written record;
BEGIN
  batch_item := 0;
  FOR item IN SELECT * FROM jsonb_array_elements($1) LOOP
    BEGIN
      SELECT * INTO STRICT written FROM write_provisional_lead(nullif(item->0, 'null'));
      RETURN QUERY SELECT batch_item, NULL::text, NULL::text, NULL::text, written.id, written.enqueued;
    EXCEPTION WHEN OTHERS THEN
      GET STACKED DIAGNOSTICS failed_code = RETURNED_SQLSTATE, failed_message = MESSAGE_TEXT,
                              failed_constraint = CONSTRAINT_NAME;
      RETURN QUERY SELECT batch_item, failed_code, failed_message, nullif(failed_constraint, ''), NULL::bigint, NULL::integer;
    END;
    batch_item := batch_item + 1;
  END LOOP;
END;
$kept$;
