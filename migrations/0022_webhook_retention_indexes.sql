-- Retention of the outbound webhooks' rows (lib/webhooks/retention.ts): a delivery that is done (succeeded,
-- failed or cancelled) is deleted 30 days after it completed, its attempts with it (cascade), then every event
-- left without a delivery once it is as old. These indexes make each batch an index scan: the due deliveries
-- in completion order, the cascade's look-up of a delivery's attempts, and the old events in creation order.
CREATE INDEX "webhook_deliveries_done_idx" ON "webhook_deliveries" USING btree ("completed_at") WHERE "webhook_deliveries"."status" <> 'pending';--> statement-breakpoint
CREATE INDEX "webhook_delivery_attempts_delivery_idx" ON "webhook_delivery_attempts" USING btree ("delivery_id");--> statement-breakpoint
CREATE INDEX "webhook_events_created_at_idx" ON "webhook_events" USING btree ("created_at");
