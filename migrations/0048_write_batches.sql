-- Server leads, sales and refunds arriving at one isolate while one of their kind is being written go together
-- as one statement and one transaction (lib/db/group-committed-write.ts): write_leads, write_sales and
-- write_refunds run write_lead, write_sale or write_refund once per item of a JSON array, each item in a
-- subtransaction of its own (BEGIN ... EXCEPTION), and return each item's row, or the SQLSTATE, message and
-- constraint of the error that rolled it back alone, so every request's write succeeds or fails as it would
-- alone. Workers deployed before this migration never call them.
CREATE OR REPLACE FUNCTION write_leads(jsonb)
RETURNS TABLE (batch_item integer, failed_code text, failed_message text, failed_constraint text, id bigint, enqueued integer)
LANGUAGE plpgsql SET plan_cache_mode = force_generic_plan AS $kept$
DECLARE
  item jsonb;
  written record;
BEGIN
  batch_item := 0;
  FOR item IN SELECT * FROM jsonb_array_elements($1) LOOP
    BEGIN
      SELECT * INTO STRICT written FROM write_lead(nullif(item->0, 'null'), nullif(item->1, 'null'), nullif(item->2, 'null'), nullif(item->3, 'null'), nullif(item->4, 'null'));
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
--> statement-breakpoint
CREATE OR REPLACE FUNCTION write_sales(jsonb)
RETURNS TABLE (batch_item integer, failed_code text, failed_message text, failed_constraint text, sale_id bigint, commission_id bigint, linked boolean, enqueued integer)
LANGUAGE plpgsql SET plan_cache_mode = force_generic_plan AS $kept$
DECLARE
  item jsonb;
  written record;
BEGIN
  batch_item := 0;
  FOR item IN SELECT * FROM jsonb_array_elements($1) LOOP
    BEGIN
      SELECT * INTO STRICT written FROM write_sale(nullif(item->0, 'null'), nullif(item->1, 'null'), nullif(item->2, 'null'), nullif(item->3, 'null'), nullif(item->4, 'null'), nullif(item->5, 'null'), nullif(item->6, 'null'), nullif(item->7, 'null'), nullif(item->8, 'null'), nullif(item->9, 'null'));
      RETURN QUERY SELECT batch_item, NULL::text, NULL::text, NULL::text, written.sale_id, written.commission_id, written.linked, written.enqueued;
    EXCEPTION WHEN OTHERS THEN
      GET STACKED DIAGNOSTICS failed_code = RETURNED_SQLSTATE, failed_message = MESSAGE_TEXT,
                              failed_constraint = CONSTRAINT_NAME;
      RETURN QUERY SELECT batch_item, failed_code, failed_message, nullif(failed_constraint, ''), NULL::bigint, NULL::bigint, NULL::boolean, NULL::integer;
    END;
    batch_item := batch_item + 1;
  END LOOP;
END;
$kept$;
--> statement-breakpoint
CREATE OR REPLACE FUNCTION write_refunds(jsonb)
RETURNS TABLE (batch_item integer, failed_code text, failed_message text, failed_constraint text, ok boolean, refund_id bigint)
LANGUAGE plpgsql SET plan_cache_mode = force_generic_plan AS $kept$
DECLARE
  item jsonb;
  written record;
BEGIN
  batch_item := 0;
  FOR item IN SELECT * FROM jsonb_array_elements($1) LOOP
    BEGIN
      SELECT * INTO STRICT written FROM write_refund(nullif(item->0, 'null'), nullif(item->1, 'null'), nullif(item->2, 'null'), nullif(item->3, 'null'), nullif(item->4, 'null'));
      RETURN QUERY SELECT batch_item, NULL::text, NULL::text, NULL::text, written.ok, written.refund_id;
    EXCEPTION WHEN OTHERS THEN
      GET STACKED DIAGNOSTICS failed_code = RETURNED_SQLSTATE, failed_message = MESSAGE_TEXT,
                              failed_constraint = CONSTRAINT_NAME;
      RETURN QUERY SELECT batch_item, failed_code, failed_message, nullif(failed_constraint, ''), NULL::boolean, NULL::bigint;
    END;
    batch_item := batch_item + 1;
  END LOOP;
END;
$kept$;
