-- Every kept-plan function (lib/db/kept-plan.ts) runs without sequential scans where an index can serve: a
-- kept plan lives as long as its connection or until analyze changes the table's statistics, and one made
-- while a table was small read the whole table on every call as it grew (the sale's ids link read every id of
-- its namespace on the bench's fresh database). Every statement on the request path is an index lookup by
-- design; this keeps it so whatever the statistics were when the plan was made. Not read_readiness_facts: it
-- reads every key of its program, and with the setting PostgreSQL picked a plan 400 times slower. Functions
-- defined from now on carry the setting in their definition.
ALTER FUNCTION record_click(text, text, timestamp with time zone, text, boolean, text, text, text, text, text, text, integer, boolean, integer) SET enable_seqscan = off;
--> statement-breakpoint
ALTER FUNCTION read_lead_facts(text, text, text, integer) SET enable_seqscan = off;
--> statement-breakpoint
ALTER FUNCTION read_sale_facts(text, text, text, text, text) SET enable_seqscan = off;
--> statement-breakpoint
ALTER FUNCTION insert_lead_event(integer, integer, text, text, text, text, text, boolean, timestamp with time zone, boolean, text, text, boolean, timestamp with time zone) SET enable_seqscan = off;
--> statement-breakpoint
ALTER FUNCTION insert_lead_event_of_customer(integer, integer, text, text, text, text, text, boolean, timestamp with time zone, boolean, text, text, boolean, timestamp with time zone, bigint) SET enable_seqscan = off;
--> statement-breakpoint
ALTER FUNCTION insert_lead_event_of_new_customer(integer, integer, text, text, text, text, text, boolean, timestamp with time zone, boolean, text, text, boolean, timestamp with time zone, integer, text) SET enable_seqscan = off;
--> statement-breakpoint
ALTER FUNCTION enqueue_lead_webhook(timestamp with time zone) SET enable_seqscan = off;
--> statement-breakpoint
ALTER FUNCTION guard_provisional_lead(integer, text, text) SET enable_seqscan = off;
--> statement-breakpoint
ALTER FUNCTION insert_sale(text, integer, integer, bigint, bigint, text, text, jsonb, boolean, text, text, text, timestamp with time zone, text, text, boolean, text, boolean, boolean, timestamp with time zone) SET enable_seqscan = off;
--> statement-breakpoint
ALTER FUNCTION insert_sale_of_customer(text, integer, integer, bigint, bigint, text, text, jsonb, boolean, text, text, text, timestamp with time zone, text, text, boolean, text, boolean, boolean, timestamp with time zone, bigint) SET enable_seqscan = off;
--> statement-breakpoint
ALTER FUNCTION insert_sale_of_new_customer(text, integer, integer, bigint, bigint, text, text, jsonb, boolean, text, text, text, timestamp with time zone, text, text, boolean, text, boolean, boolean, timestamp with time zone, integer, text) SET enable_seqscan = off;
--> statement-breakpoint
ALTER FUNCTION claim_payment_ids(integer, text, text, json) SET enable_seqscan = off;
--> statement-breakpoint
ALTER FUNCTION create_converted_customer(integer, integer, text, timestamp with time zone, text, text, text, text, timestamp with time zone, timestamp with time zone, timestamp with time zone) SET enable_seqscan = off;
--> statement-breakpoint
ALTER FUNCTION convert_customer(bigint, timestamp with time zone, timestamp with time zone, text, text, text, timestamp with time zone) SET enable_seqscan = off;
--> statement-breakpoint
ALTER FUNCTION insert_sale_commission(text, text, bigint, text, text, timestamp with time zone, timestamp with time zone, timestamp with time zone) SET enable_seqscan = off;
--> statement-breakpoint
ALTER FUNCTION credit_sale_commission(text, text, timestamp with time zone) SET enable_seqscan = off;
--> statement-breakpoint
ALTER FUNCTION link_payment_ids_and_enqueue_webhooks(text, text, json, timestamp with time zone) SET enable_seqscan = off;
--> statement-breakpoint
ALTER FUNCTION read_refund_facts(text, text) SET enable_seqscan = off;
--> statement-breakpoint
ALTER FUNCTION record_refund(bigint, bigint, bigint, text, text, bigint, bigint, bigint, bigint, text, text, timestamp with time zone) SET enable_seqscan = off;
--> statement-breakpoint
ALTER FUNCTION refund_commission(bigint, integer, text, bigint, text, boolean, timestamp with time zone) SET enable_seqscan = off;
--> statement-breakpoint
ALTER FUNCTION refund_deduction(bigint, bigint, bigint, text, timestamp with time zone) SET enable_seqscan = off;
--> statement-breakpoint
ALTER FUNCTION enqueue_commission_refunded_webhook(bigint, bigint, text, timestamp with time zone) SET enable_seqscan = off;
