-- The tracking reads of a lead, a sale and a refund through the isolate's group commit (lib/db/group-commit.ts),
-- as the click's since 0044: the reads arriving while one is on its way to the database are sent together,
-- as one call of a kept-plan batch that runs the read's own function once per item and numbers each item's
-- row (lib/db/kept-plan-batch.ts). A read sent alone still calls read_lead_facts, read_sale_facts or
-- read_refund_facts.
CREATE OR REPLACE FUNCTION read_lead_facts_batch(jsonb)
RETURNS TABLE (batch_item integer, api_key json, click json, customer_by_click json, customer_by_key json, programs json)
LANGUAGE plpgsql SET plan_cache_mode = force_generic_plan AS $kept$
DECLARE
  item jsonb;
BEGIN
  batch_item := 0;
  FOR item IN SELECT * FROM jsonb_array_elements($1) LOOP
    RETURN QUERY SELECT batch_item, * FROM read_lead_facts((item->>0)::text, (item->>1)::text, (item->>2)::text, (item->>3)::integer);
    batch_item := batch_item + 1;
  END LOOP;
END;
$kept$;
--> statement-breakpoint
CREATE OR REPLACE FUNCTION read_sale_facts_batch(jsonb)
RETURNS TABLE (batch_item integer, key json, program json, recorded_sales json, customer_by_key json, click json)
LANGUAGE plpgsql SET plan_cache_mode = force_generic_plan AS $kept$
DECLARE
  item jsonb;
BEGIN
  batch_item := 0;
  FOR item IN SELECT * FROM jsonb_array_elements($1) LOOP
    RETURN QUERY SELECT batch_item, * FROM read_sale_facts((item->>0)::text, (item->>1)::text, (item->>2)::text, (item->>3)::text, (item->>4)::text);
    batch_item := batch_item + 1;
  END LOOP;
END;
$kept$;
--> statement-breakpoint
CREATE OR REPLACE FUNCTION read_refund_facts_batch(jsonb)
RETURNS TABLE (batch_item integer, key json, sale json)
LANGUAGE plpgsql SET plan_cache_mode = force_generic_plan AS $kept$
DECLARE
  item jsonb;
BEGIN
  batch_item := 0;
  FOR item IN SELECT * FROM jsonb_array_elements($1) LOOP
    RETURN QUERY SELECT batch_item, * FROM read_refund_facts((item->>0)::text, (item->>1)::text);
    batch_item := batch_item + 1;
  END LOOP;
END;
$kept$;
