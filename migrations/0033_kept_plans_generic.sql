-- Every kept-plan function (0026-0032) runs with generic plans (lib/db/kept-plan.ts): left to choose,
-- PostgreSQL planned a call anew for its values whenever it estimated the generic plan dearer (the readiness
-- statement did so on every request: its database CPU per request 2.9 ms that way, 2.2 ms generic), which
-- keeps nothing but the parse. Functions defined from now on carry the setting in their definition.
ALTER FUNCTION record_click(text, text, timestamp with time zone, text, boolean, text, text, text, text, text, text, integer, boolean, integer) SET plan_cache_mode = force_generic_plan;
--> statement-breakpoint
ALTER FUNCTION read_lead_facts(text, text, text, integer) SET plan_cache_mode = force_generic_plan;
--> statement-breakpoint
ALTER FUNCTION read_sale_program(text, text) SET plan_cache_mode = force_generic_plan;
--> statement-breakpoint
ALTER FUNCTION read_recorded_sales(text, text) SET plan_cache_mode = force_generic_plan;
--> statement-breakpoint
ALTER FUNCTION read_sale_customer_by_key(text, text) SET plan_cache_mode = force_generic_plan;
--> statement-breakpoint
ALTER FUNCTION read_sale_click(text) SET plan_cache_mode = force_generic_plan;
--> statement-breakpoint
ALTER FUNCTION insert_lead_event(integer, integer, text, text, text, text, text, boolean, timestamp with time zone, boolean, text, text, boolean, timestamp with time zone) SET plan_cache_mode = force_generic_plan;
--> statement-breakpoint
ALTER FUNCTION insert_lead_event_of_customer(integer, integer, text, text, text, text, text, boolean, timestamp with time zone, boolean, text, text, boolean, timestamp with time zone, bigint) SET plan_cache_mode = force_generic_plan;
--> statement-breakpoint
ALTER FUNCTION insert_lead_event_of_new_customer(integer, integer, text, text, text, text, text, boolean, timestamp with time zone, boolean, text, text, boolean, timestamp with time zone, integer, text) SET plan_cache_mode = force_generic_plan;
--> statement-breakpoint
ALTER FUNCTION enqueue_lead_webhook(timestamp with time zone) SET plan_cache_mode = force_generic_plan;
--> statement-breakpoint
ALTER FUNCTION insert_sale(text, integer, integer, bigint, bigint, text, text, jsonb, boolean, text, text, text, timestamp with time zone, text, text, boolean, text, boolean, boolean, timestamp with time zone) SET plan_cache_mode = force_generic_plan;
--> statement-breakpoint
ALTER FUNCTION insert_sale_of_customer(text, integer, integer, bigint, bigint, text, text, jsonb, boolean, text, text, text, timestamp with time zone, text, text, boolean, text, boolean, boolean, timestamp with time zone, bigint) SET plan_cache_mode = force_generic_plan;
--> statement-breakpoint
ALTER FUNCTION insert_sale_of_new_customer(text, integer, integer, bigint, bigint, text, text, jsonb, boolean, text, text, text, timestamp with time zone, text, text, boolean, text, boolean, boolean, timestamp with time zone, integer, text) SET plan_cache_mode = force_generic_plan;
--> statement-breakpoint
ALTER FUNCTION enqueue_sale_webhooks(text, text, timestamp with time zone) SET plan_cache_mode = force_generic_plan;
--> statement-breakpoint
ALTER FUNCTION read_written_sale_ids(text, text) SET plan_cache_mode = force_generic_plan;
--> statement-breakpoint
ALTER FUNCTION read_refund_facts(text, text) SET plan_cache_mode = force_generic_plan;
--> statement-breakpoint
ALTER FUNCTION refund_sale_amount(bigint, bigint, bigint) SET plan_cache_mode = force_generic_plan;
--> statement-breakpoint
ALTER FUNCTION insert_refund(bigint, bigint, text, text, bigint, bigint, bigint, bigint, text, text, timestamp with time zone) SET plan_cache_mode = force_generic_plan;
--> statement-breakpoint
ALTER FUNCTION refund_commission(bigint, integer, text, bigint, text, boolean, timestamp with time zone) SET plan_cache_mode = force_generic_plan;
--> statement-breakpoint
ALTER FUNCTION refund_deduction_ledger(bigint, bigint, bigint, text, timestamp with time zone) SET plan_cache_mode = force_generic_plan;
--> statement-breakpoint
ALTER FUNCTION refund_deduction_balance(bigint, bigint, bigint, text, timestamp with time zone) SET plan_cache_mode = force_generic_plan;
--> statement-breakpoint
ALTER FUNCTION refund_deduction_withdrawals(bigint, bigint, bigint, text, timestamp with time zone) SET plan_cache_mode = force_generic_plan;
--> statement-breakpoint
ALTER FUNCTION enqueue_commission_refunded_webhook(bigint, bigint, text, timestamp with time zone) SET plan_cache_mode = force_generic_plan;
--> statement-breakpoint
ALTER FUNCTION read_refund_row_id(bigint, text) SET plan_cache_mode = force_generic_plan;
--> statement-breakpoint
ALTER FUNCTION read_readiness_facts(text, integer, timestamp with time zone, integer) SET plan_cache_mode = force_generic_plan;
