-- One id namespace for every id a payment is known by (issue 9, section 2 and defect 1). `payment_aliases`
-- now holds every sale's own id (its `processor_event_id`) beside the provider's other ids of the payment,
-- in ONE unique index on (namespace, alias). The namespace is 'live' for live sales and 'test:<program id>'
-- for test sales, so a test sale never uses up a live id, nor another program's test id.
ALTER TABLE "payment_aliases" ADD COLUMN "namespace" text DEFAULT 'live' NOT NULL;--> statement-breakpoint
ALTER TABLE "affiliate_sale_events" ADD COLUMN "id_namespace" text GENERATED ALWAYS AS (CASE WHEN "is_test" THEN 'test:' || "program_id"::text ELSE 'live' END) STORED;--> statement-breakpoint
UPDATE "payment_aliases" a SET "namespace" = s."id_namespace" FROM "affiliate_sale_events" s WHERE s."id" = a."sale_id" AND s."is_test";--> statement-breakpoint
DROP INDEX "payment_aliases_alias_unique";--> statement-breakpoint
CREATE UNIQUE INDEX "payment_aliases_namespace_alias_unique" ON "payment_aliases" USING btree ("namespace","alias");--> statement-breakpoint
CREATE INDEX "payment_aliases_namespace_payment_idx" ON "payment_aliases" USING btree ("namespace","payment_id");--> statement-breakpoint
DROP INDEX "affiliate_sale_events_processor_event_id_unique";--> statement-breakpoint
CREATE UNIQUE INDEX "affiliate_sale_events_namespace_id_unique" ON "affiliate_sale_events" USING btree ("id_namespace","processor_event_id");--> statement-breakpoint
INSERT INTO "payment_aliases" ("program_id", "namespace", "alias", "payment_id", "sale_id", "created_at")
SELECT s."program_id", s."id_namespace", s."processor_event_id", s."processor_event_id", s."id", s."created_at"
FROM "affiliate_sale_events" s
ON CONFLICT ("namespace", "alias") DO UPDATE SET "sale_id" = excluded."sale_id" WHERE "payment_aliases"."sale_id" IS NULL;
