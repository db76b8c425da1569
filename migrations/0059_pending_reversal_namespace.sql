-- A reversal kept before its sale (a refund or dispute event arriving first) records its mode's namespace
-- (`live`, or `test:<program>` for a `livemode: false` event), and applies only to a sale of that namespace. It was
-- applied to whichever sale the payment id found, read back as live: a test-mode refund of a payment id reversed
-- the live sale later recorded under it, commission and partner balance included. Rows kept so far take the mode
-- of the event that kept them.
ALTER TABLE "stripe_pending_reversals" ADD COLUMN "namespace" text DEFAULT 'live' NOT NULL;
--> statement-breakpoint
UPDATE "stripe_pending_reversals" AS "r" SET "namespace" = 'test:' || "r"."program_id"
FROM "stripe_events" AS "e"
WHERE "e"."event_id" = "r"."event_id" AND "e"."livemode" = false AND "r"."applied_at" IS NULL;
--> statement-breakpoint
-- The refunds a kept refund event listed, with their amounts (oldest first): applied each under its own id when
-- the sale is recorded, as an event applied at once is (lib/stripe/provider-reversals.ts). Rows kept so far list
-- none, and are applied as before, under the newest refund's id.
ALTER TABLE "stripe_pending_reversals" ADD COLUMN "listed_refunds" jsonb DEFAULT '[]'::jsonb NOT NULL;
--> statement-breakpoint
-- Readiness's `test_event` check counts the test sales sent with the program key (source `api`), as it says, not
-- the provider's `livemode: false` payments (read_readiness_facts, its parameters and result columns unchanged).
CREATE OR REPLACE FUNCTION read_readiness_facts(text, integer, timestamp with time zone, integer)
RETURNS TABLE (key json, facts json)
LANGUAGE plpgsql SET plan_cache_mode = force_generic_plan AS $kept$
#variable_conflict use_column
BEGIN
  RETURN QUERY
with key as (
      select "program_api_keys"."program_id" as program_id, "program_api_keys"."is_test" as is_test, "program_api_keys"."key_prefix" as key_prefix,
             "program_api_keys"."rotation_marked_at" as rotation_marked_at, "program_api_keys"."rotate_by" as rotate_by
      from "program_api_keys" where "program_api_keys"."key_hash" = $1::text and "program_api_keys"."revoked_at" is null
    ),
    program as (
      select "programs"."id" as id, "programs"."lead_auth_policy" as lead_auth_policy, "programs"."allowed_origins" as allowed_origins,
             "programs"."stripe_account_id" as stripe_account_id,
             "programs"."hold_flagged_commissions" as hold_flagged_commissions, "programs"."hold_days" as hold_days,
             "programs"."email_attribution_settled_only" as email_attribution_settled_only
      from "programs"
      where "programs"."id" = coalesce($2::int, (select program_id from key))
    ),
    live_keys as (
      select count(*) filter (where "program_api_keys"."rotate_by" is null) as active,
             count(*) filter (where "program_api_keys"."rotate_by" is not null) as retiring,
             min("program_api_keys"."rotate_by") as earliest_rotate_by
      from "program_api_keys"
      where "program_api_keys"."program_id" = (select id from program) and not "program_api_keys"."is_test" and "program_api_keys"."revoked_at" is null
        and ("program_api_keys"."rotate_by" is null or "program_api_keys"."rotate_by" > $3::timestamptz)
    ),
    links as (
      select count(*) filter (where "l"."is_active") as active,
             count(*) filter (where "l"."is_active" and "pp"."status" = 'active') as active_with_partner
      from "referral_links" "l"
      left join "program_partners" "pp" on "pp"."program_id" = "l"."program_id" and "pp"."partner_id" = "l"."partner_id"
      where "l"."program_id" = (select id from program) and not "l"."test_only"
    ),
    recent_clicks as (
      select "affiliate_click_events"."created_at" as created_at, "affiliate_click_events"."landing_origin" as landing_origin from "affiliate_click_events"
      where "affiliate_click_events"."program_id" = (select id from program) and not "affiliate_click_events"."is_test"
      order by "affiliate_click_events"."created_at" desc limit $4::int
    ),
    clicks as (
      select count(*) as count, max(created_at) as last_at,
             count(*) filter (where landing_origin = any(program.allowed_origins)) as from_allowed_origin,
             (array_agg(landing_origin order by created_at desc))[1] as last_origin,
             (array_agg(landing_origin order by created_at desc)
                filter (where not coalesce(landing_origin = any(program.allowed_origins), false)))[1]
               as last_other_origin
      from recent_clicks cross join program
    ),
    recent_leads as (
      select "affiliate_lead_events"."provisional" as provisional, "affiliate_lead_events"."settled_at" as settled_at, "affiliate_lead_events"."created_at" as created_at,
             "affiliate_lead_events"."fraud_flags" as fraud_flags from "affiliate_lead_events"
      where "affiliate_lead_events"."program_id" = (select id from program) and not "affiliate_lead_events"."is_test"
      order by "affiliate_lead_events"."created_at" desc limit $4::int
    ),
    recent_sales as (
      select "affiliate_sale_events"."source" as source, "affiliate_sale_events"."created_at" as created_at, "affiliate_sale_events"."fraud_flags" as fraud_flags from "affiliate_sale_events"
      where "affiliate_sale_events"."program_id" = (select id from program) and not "affiliate_sale_events"."is_test"
      order by "affiliate_sale_events"."created_at" desc limit $4::int
    ),
    recent_commissions as (
      select "commissions"."created_at" as created_at, "commissions"."fraud_flags" as fraud_flags from "commissions"
      where "commissions"."program_id" = (select id from program) and not "commissions"."is_test"
      order by "commissions"."created_at" desc limit $4::int
    ),
    recent_refunds as (
      select "r"."created_at" as created_at from "refunds" "r"
      where "r"."program_id" = (select id from program)
        and exists (select 1 from "affiliate_sale_events" "s" where "s"."id" = "r"."sale_id" and not "s"."is_test")
      order by "r"."created_at" desc limit $4::int
    ),
    recent_tests as (
      (select "affiliate_lead_events"."created_at" as created_at from "affiliate_lead_events"
       where "affiliate_lead_events"."program_id" = (select id from program) and "affiliate_lead_events"."is_test" and "affiliate_lead_events"."via_api_key"
       order by "affiliate_lead_events"."created_at" desc limit $4::int)
      union all
      (select "affiliate_sale_events"."created_at" as created_at from "affiliate_sale_events"
       where "affiliate_sale_events"."program_id" = (select id from program) and "affiliate_sale_events"."is_test" and "affiliate_sale_events"."source" = 'api'
       order by "affiliate_sale_events"."created_at" desc limit $4::int)
    )
    select
      (select row_to_json(key) from key) as key,
      (select json_build_object(
        'program_id', program.id,
        'lead_auth_policy', program.lead_auth_policy,
        'allowed_origins', program.allowed_origins,
        'payments_account_connected', program.stripe_account_id is not null,
        'live_keys', (select row_to_json(live_keys) from live_keys),
        'links', (select row_to_json(links) from links),
        'clicks', (select row_to_json(clicks) from clicks),
        'settled_leads', (select json_build_object('count', count(*), 'last_at', max(coalesce(settled_at, created_at)))
                          from recent_leads where not provisional or settled_at is not null),
        'provisional_leads', (select json_build_object('count', count(*), 'last_at', max(created_at))
                              from recent_leads where provisional and settled_at is null),
        'api_sales', (select json_build_object('count', count(*), 'last_at', max(created_at))
                      from recent_sales where source = 'api'),
        'provider_sales', (select json_build_object('count', count(*), 'last_at', max(created_at))
                           from recent_sales where source <> 'api'),
        'commissions', (select json_build_object('count', count(*), 'last_at', max(created_at)) from recent_commissions),
        'refunds', (select json_build_object('count', count(*), 'last_at', max(created_at)) from recent_refunds),
        'test_events', (select json_build_object('count', least(count(*), $4::int), 'last_at', max(created_at))
                        from recent_tests),
        'fraud', json_build_object(
          'leads', (select count(*) from recent_leads where cardinality(fraud_flags) > 0),
          'sales', (select count(*) from recent_sales where cardinality(fraud_flags) > 0),
          'commissions', (select count(*) from recent_commissions where cardinality(fraud_flags) > 0),
          'codes', (select coalesce(json_agg(code order by code), '[]'::json) from (
                      select unnest(fraud_flags) as code from recent_leads
                      union select unnest(fraud_flags) from recent_sales
                      union select unnest(fraud_flags) from recent_commissions) seen),
          'hold_flagged_commissions', program.hold_flagged_commissions,
          'hold_days', program.hold_days,
          'email_attribution_settled_only', program.email_attribution_settled_only)
      ) from program) as facts;
END;
$kept$;
