-- A server lead's write as one statement (lib/tracking/lead/lead-store.ts): its customer created from its
-- click or promoted to lead become kept-plan functions (they were sent as text and planned on every lead),
-- and write_lead runs them with the settling of its click's provisional leads (0041) and the lead event's
-- insert (0040's record_lead_event_of_customer or _of_new_customer, with its webhook), where the batch sent
-- up to three statements.
CREATE OR REPLACE FUNCTION create_lead_customer(integer, integer, text, timestamp with time zone, text, text, text, timestamp with time zone)
RETURNS void
LANGUAGE plpgsql SET plan_cache_mode = force_generic_plan SET enable_seqscan = off AS $kept$
#variable_conflict use_column
BEGIN
insert into "customers" ("program_id", "partner_id", "click_id", "clicked_at", "customer_key", "status", "email_hash", "email_masked", "signed_up_at", "created_at", "updated_at")
      values ($1::int, $2::int, $3::text, $4::timestamptz,
              $5::text, 'lead', $6::text, $7::text,
              $8::timestamptz, $8::timestamptz, $8::timestamptz);
END;
$kept$;
--> statement-breakpoint
CREATE OR REPLACE FUNCTION promote_customer_to_lead(bigint, text, text, text, timestamp with time zone)
RETURNS TABLE (promoted boolean)
LANGUAGE plpgsql SET plan_cache_mode = force_generic_plan SET enable_seqscan = off AS $kept$
#variable_conflict use_column
BEGIN
  RETURN QUERY
with promoted as (
        update "customers"
        set "status" = 'lead',
            "customer_key" = coalesce($2::text, "customers"."customer_key"),
            "email_hash" = coalesce($3::text, "customers"."email_hash"),
            "email_masked" = coalesce($4::text, "customers"."email_masked"),
            "signed_up_at" = $5::timestamptz,
            "updated_at" = $5::timestamptz
        where "customers"."id" = $1::bigint and "customers"."status" = 'clicked'
        returning "customers"."id")
      select guard(exists (select 1 from promoted), 'lead-customer-still-clicked') as promoted;
END;
$kept$;
--> statement-breakpoint
CREATE OR REPLACE FUNCTION write_lead(jsonb, jsonb, jsonb, jsonb, jsonb)
RETURNS TABLE (id bigint, enqueued integer)
LANGUAGE plpgsql SET plan_cache_mode = force_generic_plan AS $kept$
BEGIN
  IF $1 IS NOT NULL THEN
    PERFORM create_lead_customer(($1->>0)::integer, ($1->>1)::integer, ($1->>2)::text, ($1->>3)::timestamp with time zone, ($1->>4)::text, ($1->>5)::text, ($1->>6)::text, ($1->>7)::timestamp with time zone);
  END IF;
  IF $2 IS NOT NULL THEN
    PERFORM promote_customer_to_lead(($2->>0)::bigint, ($2->>1)::text, ($2->>2)::text, ($2->>3)::text, ($2->>4)::timestamp with time zone);
  END IF;
  IF $3 IS NOT NULL THEN
    PERFORM settle_provisional_leads(($3->>0)::integer, ($3->>1)::text, ($3->>2)::timestamp with time zone, ($3->>3)::bigint, ($3->>4)::integer, ($3->>5)::text);
  END IF;
  IF $4 IS NOT NULL THEN
    RETURN QUERY SELECT * FROM record_lead_event_of_customer(($4->>0)::integer, ($4->>1)::integer, ($4->>2)::text, ($4->>3)::text, ($4->>4)::text, ($4->>5)::text, ($4->>6)::text, ($4->>7)::boolean, ($4->>8)::timestamp with time zone, ($4->>9)::boolean, ($4->>10)::text, ($4->>11)::text, ($4->>12)::boolean, ($4->>13)::timestamp with time zone, ($4->>14)::bigint);
  END IF;
  IF $5 IS NOT NULL THEN
    RETURN QUERY SELECT * FROM record_lead_event_of_new_customer(($5->>0)::integer, ($5->>1)::integer, ($5->>2)::text, ($5->>3)::text, ($5->>4)::text, ($5->>5)::text, ($5->>6)::text, ($5->>7)::boolean, ($5->>8)::timestamp with time zone, ($5->>9)::boolean, ($5->>10)::text, ($5->>11)::text, ($5->>12)::boolean, ($5->>13)::timestamp with time zone, ($5->>14)::integer, ($5->>15)::text);
  END IF;
END;
$kept$;
