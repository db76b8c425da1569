-- A refund's in-app notifications written in its own transaction (insert_refund_notifications, a step of
-- write_refund), where the worker sent them on the notifications queue after the response and the queue
-- consumer wrote them: a notification is no longer lost to a send that failed three times, a provider event no
-- longer has to publish before it completes, and a refund costs no queue message and no consumer write. Each
-- is deduped by the refund row the same write inserts and its recipient, `refund:<refund row id>:partner` or
-- `:advertiser`, the keys the consumer wrote.
-- write_refund takes a fifth step: the four-step function is dropped (one definition per name, as
-- test/node/kept-plans.test.ts checks), so a refund sent to a worker deployed before this migration, between the
-- migration and the deploy, answers 500, which the spec lets the brand retry with the same refund_id.
DROP FUNCTION IF EXISTS write_refund(jsonb, jsonb, jsonb, jsonb);
--> statement-breakpoint
CREATE OR REPLACE FUNCTION insert_refund_notifications(jsonb, bigint, text, timestamp with time zone)
RETURNS void
LANGUAGE plpgsql SET plan_cache_mode = force_generic_plan SET enable_seqscan = off AS $kept$
#variable_conflict use_column
BEGIN
insert into "notifications" ("recipient_type", "recipient_id", "program_id", "kind", "payload", "dedupe_key", "created_at")
      select n.recipient_type, n.recipient_id, n.program_id, n.kind, n.payload,
             'refund:' || (select "refunds"."id" from "refunds" where "refunds"."sale_id" = $2::bigint and "refunds"."idempotency_key" = $3::text) || ':' || n.recipient_type, $4::timestamptz
      from jsonb_to_recordset($1::jsonb)
        as n(recipient_type text, recipient_id integer, program_id integer, kind text, payload jsonb)
      on conflict ("dedupe_key") do nothing;
END;
$kept$;
--> statement-breakpoint
CREATE OR REPLACE FUNCTION write_refund(jsonb, jsonb, jsonb, jsonb, jsonb)
RETURNS TABLE (ok boolean, refund_id bigint)
LANGUAGE plpgsql SET plan_cache_mode = force_generic_plan AS $kept$
BEGIN
  IF $1 IS NOT NULL THEN
    RETURN QUERY SELECT * FROM record_refund(($1->>0)::bigint, ($1->>1)::bigint, ($1->>2)::bigint, ($1->>3)::text, ($1->>4)::text, ($1->>5)::bigint, ($1->>6)::bigint, ($1->>7)::bigint, ($1->>8)::bigint, ($1->>9)::text, ($1->>10)::text, ($1->>11)::timestamp with time zone);
  END IF;
  IF $2 IS NOT NULL THEN
    PERFORM refund_commission(($2->>0)::bigint, ($2->>1)::integer, ($2->>2)::text, ($2->>3)::bigint, ($2->>4)::text, ($2->>5)::boolean, ($2->>6)::timestamp with time zone);
  END IF;
  IF $3 IS NOT NULL THEN
    PERFORM refund_deduction(($3->>0)::bigint, ($3->>1)::bigint, ($3->>2)::bigint, ($3->>3)::text, ($3->>4)::timestamp with time zone);
  END IF;
  IF $4 IS NOT NULL THEN
    PERFORM enqueue_commission_refunded_webhook(($4->>0)::bigint, ($4->>1)::bigint, ($4->>2)::text, ($4->>3)::timestamp with time zone);
  END IF;
  IF $5 IS NOT NULL THEN
    PERFORM insert_refund_notifications(($5->>0)::jsonb, ($5->>1)::bigint, ($5->>2)::text, ($5->>3)::timestamp with time zone);
  END IF;
END;
$kept$;
