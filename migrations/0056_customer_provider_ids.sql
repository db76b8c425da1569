-- Every provider customer id a customer paid or subscribed under, not only its first. A buyer who paid once
-- under one provider customer and later subscribed under another kept only the first in
-- customers.provider_customer_id (saved when it had none), so the subscription's renewals, which carry no
-- metadata and not always an email, were not attributed; and a subscription checkout replaced the saved id,
-- so a later payment under the older one was not found by it. Each id is now bound to the first customer of
-- the program that used it (the primary key; a second customer's write of it does nothing), read by the
-- provider's attribution step 3.
-- The two customer writes of the sale keep their parameters and results, so workers deployed before this
-- migration run on them as they are, and their provider payments bind their ids too. A subscription checkout's
-- binding by such a worker writes only customers.provider_customer_id, so the read falls back to that column
-- when no binding holds the id (lib/stripe/provider-sale-store.ts).
CREATE TABLE "customer_provider_ids" (
	"program_id" integer NOT NULL,
	"provider_customer_id" text NOT NULL,
	"customer_id" bigint NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "customer_provider_ids_program_id_provider_customer_id_pk" PRIMARY KEY("program_id","provider_customer_id")
);
--> statement-breakpoint
ALTER TABLE "customer_provider_ids" ADD CONSTRAINT "customer_provider_ids_program_id_programs_id_fk" FOREIGN KEY ("program_id") REFERENCES "public"."programs"("id") ON DELETE no action ON UPDATE no action;
--> statement-breakpoint
ALTER TABLE "customer_provider_ids" ADD CONSTRAINT "customer_provider_ids_customer_id_customers_id_fk" FOREIGN KEY ("customer_id") REFERENCES "public"."customers"("id") ON DELETE cascade ON UPDATE no action;
--> statement-breakpoint
-- The ids saved so far, each with the customer that holds it (the earliest, where two do).
INSERT INTO "customer_provider_ids" ("program_id", "provider_customer_id", "customer_id", "created_at")
SELECT DISTINCT ON ("program_id", "provider_customer_id") "program_id", "provider_customer_id", "id", "updated_at"
FROM "customers"
WHERE "provider_customer_id" IS NOT NULL
ORDER BY "program_id", "provider_customer_id", "id";
--> statement-breakpoint
CREATE OR REPLACE FUNCTION create_converted_customer(integer, integer, text, timestamp with time zone, text, text, text, text, timestamp with time zone, timestamp with time zone, timestamp with time zone)
RETURNS TABLE (created boolean)
LANGUAGE plpgsql SET plan_cache_mode = force_generic_plan SET enable_seqscan = off AS $kept$
#variable_conflict use_column
BEGIN
  RETURN QUERY
with created as (
        insert into "customers" ("program_id", "partner_id", "click_id", "clicked_at", "status", "customer_key", "email_hash", "email_masked", "provider_customer_id", "signed_up_at", "first_converted_at", "first_commission_at", "created_at", "updated_at")
        values ($1::int, $2::int, $3::text, $4::timestamptz,
                'converted', $5::text, $6::text, $7::text,
                $8::text, $9::timestamptz, $11::timestamptz,
                $10::timestamptz, $11::timestamptz, $11::timestamptz)
        on conflict do nothing
        returning "customers"."id", "customers"."program_id", "customers"."provider_customer_id"),
      linked as (
        insert into "customer_provider_ids" ("program_id", "provider_customer_id", "customer_id")
        select program_id, provider_customer_id, id from created where provider_customer_id is not null
        on conflict do nothing)
      select guard(exists (select 1 from created), 'customer created meanwhile') as created;
END;
$kept$;
--> statement-breakpoint
CREATE OR REPLACE FUNCTION convert_customer(bigint, timestamp with time zone, timestamp with time zone, text, text, text, timestamp with time zone)
RETURNS TABLE (converted boolean)
LANGUAGE plpgsql SET plan_cache_mode = force_generic_plan SET enable_seqscan = off AS $kept$
#variable_conflict use_column
BEGIN
  RETURN QUERY
with updated as (
        update "customers"
        set "status" = 'converted',
            "first_converted_at" = coalesce("customers"."first_converted_at", $7::timestamptz),
            "first_commission_at" = coalesce("customers"."first_commission_at", $3::timestamptz),
            "provider_customer_id" = coalesce("customers"."provider_customer_id", $4::text),
            "email_hash" = coalesce("customers"."email_hash", $5::text),
            "email_masked" =
              case when "customers"."email_hash" is null then $6::text else "customers"."email_masked" end,
            "updated_at" = $7::timestamptz
        where "customers"."id" = $1::bigint
          and date_trunc('milliseconds', "customers"."first_commission_at") is not distinct from $2::timestamptz
        returning "customers"."id", "customers"."program_id", $4::text as provider_customer_id),
      linked as (
        insert into "customer_provider_ids" ("program_id", "provider_customer_id", "customer_id")
        select program_id, provider_customer_id, id from updated where provider_customer_id is not null
        on conflict do nothing)
      select guard(exists (select 1 from updated), 'customer changed meanwhile') as converted;
END;
$kept$;
