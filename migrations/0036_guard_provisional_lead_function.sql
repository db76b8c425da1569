-- The provisional lead's guard as a kept-plan function (lib/db/kept-plan.ts), as 0026 did for the click's
-- statement: with it, every statement of a browser lead is planned once per connection. The TypeScript
-- statement in lib/tracking/lead/lead-store.ts is the source (test/node/kept-plans.test.ts;
-- `npm run db:kept-plans`).
CREATE OR REPLACE FUNCTION guard_provisional_lead(integer, text, text)
RETURNS TABLE (ok boolean)
LANGUAGE plpgsql SET plan_cache_mode = force_generic_plan AS $kept$
#variable_conflict use_column
BEGIN
  RETURN QUERY
select guard(
      not exists (
        select 1 from "customers"
        where "customers"."program_id" = $1::int and "customers"."click_id" = $2::text
          and "customers"."status" <> 'clicked')
      and not exists (
        select 1 from "customers"
        where "customers"."program_id" = $1::int and "customers"."customer_key" = $3::text
          and "customers"."status" <> 'clicked'),
      'lead-provisional-customer-unchanged');
END;
$kept$;
