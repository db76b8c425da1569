-- Outbound signed webhooks to the brand (README "Webhooks to your backend"). Endpoints per program; an event is
-- written to the outbox (`webhook_events` + one `webhook_deliveries` row per subscribed endpoint) by
-- `webhook_enqueue` in the SAME transaction as the change it reports, so nothing is lost if the queue is down;
-- the every-minute cron leases due deliveries and puts them on the webhooks queue; the consumer signs, sends
-- and records each attempt.
CREATE TABLE "webhook_endpoints" (
	"id" serial PRIMARY KEY NOT NULL,
	"program_id" integer NOT NULL REFERENCES "programs"("id") ON DELETE CASCADE,
	"url" text NOT NULL,
	"description" text,
	"events" text[] NOT NULL,
	"enabled" boolean DEFAULT true NOT NULL,
	"secret" text NOT NULL,
	"previous_secret" text,
	"previous_secret_expires_at" timestamp with time zone,
	"failing_since" timestamp with time zone,
	"disabled_reason" text,
	"disabled_at" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);--> statement-breakpoint
CREATE INDEX "webhook_endpoints_program_idx" ON "webhook_endpoints" USING btree ("program_id");--> statement-breakpoint
CREATE TABLE "webhook_events" (
	"id" text PRIMARY KEY NOT NULL,
	"program_id" integer NOT NULL,
	"type" text NOT NULL,
	"api_version" text DEFAULT '2026-11-01' NOT NULL,
	"dedupe_key" text NOT NULL,
	"data" jsonb NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);--> statement-breakpoint
CREATE UNIQUE INDEX "webhook_events_dedupe_key_unique" ON "webhook_events" USING btree ("dedupe_key");--> statement-breakpoint
CREATE TABLE "webhook_deliveries" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"event_id" text NOT NULL REFERENCES "webhook_events"("id") ON DELETE CASCADE,
	"endpoint_id" integer NOT NULL REFERENCES "webhook_endpoints"("id") ON DELETE CASCADE,
	"status" text DEFAULT 'pending' NOT NULL,
	"attempts" integer DEFAULT 0 NOT NULL,
	"next_attempt_at" timestamp with time zone NOT NULL,
	"lease_until" timestamp with time zone,
	"last_attempt_at" timestamp with time zone,
	"completed_at" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "webhook_deliveries_status_valid" CHECK ("status" in ('pending', 'succeeded', 'failed', 'cancelled'))
);--> statement-breakpoint
CREATE UNIQUE INDEX "webhook_deliveries_event_endpoint_unique" ON "webhook_deliveries" USING btree ("event_id","endpoint_id");--> statement-breakpoint
CREATE INDEX "webhook_deliveries_due_idx" ON "webhook_deliveries" USING btree ("next_attempt_at") WHERE "status" = 'pending';--> statement-breakpoint
CREATE INDEX "webhook_deliveries_endpoint_idx" ON "webhook_deliveries" USING btree ("endpoint_id","status");--> statement-breakpoint
CREATE TABLE "webhook_delivery_attempts" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"delivery_id" bigint NOT NULL REFERENCES "webhook_deliveries"("id") ON DELETE CASCADE,
	"endpoint_id" integer NOT NULL REFERENCES "webhook_endpoints"("id") ON DELETE CASCADE,
	"event_id" text NOT NULL,
	"attempt" integer NOT NULL,
	"attempted_at" timestamp with time zone NOT NULL,
	"succeeded" boolean NOT NULL,
	"response_status" integer,
	"latency_ms" integer NOT NULL,
	"error" text
);--> statement-breakpoint
CREATE INDEX "webhook_delivery_attempts_endpoint_idx" ON "webhook_delivery_attempts" USING btree ("endpoint_id","attempted_at");--> statement-breakpoint
-- Called inside the tracking transactions: a program without a subscribed endpoint costs one indexed lookup
-- and writes nothing. The inserts run in their own subtransaction (the inner block) so that a failure there
-- is logged by Postgres and swallowed: a webhook can never make a sale, lead or refund fail.
CREATE FUNCTION "webhook_enqueue"(p_program_id integer, p_type text, p_dedupe_key text, p_data jsonb, p_at timestamptz)
RETURNS integer LANGUAGE plpgsql AS $$
DECLARE
  v_event_id text;
  v_count integer := 0;
BEGIN
  IF p_program_id IS NULL OR NOT EXISTS (
    SELECT 1 FROM webhook_endpoints WHERE program_id = p_program_id AND enabled AND p_type = ANY(events)
  ) THEN
    RETURN 0;
  END IF;
  BEGIN
    INSERT INTO webhook_events (id, program_id, type, dedupe_key, data, created_at)
    VALUES ('msg_' || replace(gen_random_uuid()::text, '-', ''), p_program_id, p_type, p_dedupe_key, p_data, p_at)
    ON CONFLICT (dedupe_key) DO NOTHING
    RETURNING id INTO v_event_id;
    IF v_event_id IS NULL THEN
      RETURN 0;
    END IF;
    INSERT INTO webhook_deliveries (event_id, endpoint_id, next_attempt_at, created_at)
    SELECT v_event_id, id, p_at, p_at FROM webhook_endpoints
    WHERE program_id = p_program_id AND enabled AND p_type = ANY(events);
    GET DIAGNOSTICS v_count = ROW_COUNT;
  EXCEPTION WHEN OTHERS THEN
    RAISE WARNING 'webhook_enqueue % failed: %', p_type, SQLSTATE;
    RETURN 0;
  END;
  RETURN v_count;
END;
$$;
