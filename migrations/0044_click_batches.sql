-- The click's group commit (lib/db/group-commit.ts): the clicks an isolate receives while one is on its way
-- to the database are sent together, as one call of record_clicks, which runs record_click_with_dimensions
-- once per click in one transaction and numbers each click's row (lib/db/kept-plan-batch.ts). A click sent
-- alone still calls record_click_with_dimensions.
CREATE OR REPLACE FUNCTION record_clicks(jsonb)
RETURNS TABLE (batch_item integer, link json, requested_program_exists boolean, key_program_id integer, retained_click_id text, recorded boolean)
LANGUAGE plpgsql SET plan_cache_mode = force_generic_plan AS $kept$
DECLARE
  item jsonb;
BEGIN
  batch_item := 0;
  FOR item IN SELECT * FROM jsonb_array_elements($1) LOOP
    RETURN QUERY SELECT batch_item, * FROM record_click_with_dimensions((item->>0)::text, (item->>1)::text, (item->>2)::timestamp with time zone, (item->>3)::text, (item->>4)::boolean, (item->>5)::text, (item->>6)::text, (item->>7)::text, (item->>8)::text, (item->>9)::text, (item->>10)::text, (item->>11)::integer, (item->>12)::boolean, (item->>13)::integer, (item->>14)::text, (item->>15)::text, (item->>16)::text, (item->>17)::text, (item->>18)::text, (item->>19)::text);
    batch_item := batch_item + 1;
  END LOOP;
END;
$kept$;
