-- Dashboard event feed (GET /api/tracking/events/:programId): every kind is read newest first per program
-- through a (program_id, created_at) index, live or test. Refunds carry their sale's program, filled by
-- the database at insert, so the refund writers stay as they are.
CREATE INDEX "affiliate_click_events_program_test_idx" ON "affiliate_click_events" USING btree ("program_id","created_at") WHERE "affiliate_click_events"."is_test";--> statement-breakpoint
ALTER TABLE "refunds" ADD COLUMN "program_id" integer;--> statement-breakpoint
UPDATE "refunds" r SET "program_id" = s."program_id" FROM "affiliate_sale_events" s WHERE s."id" = r."sale_id" AND r."program_id" IS NULL;--> statement-breakpoint
CREATE FUNCTION "refunds_set_program_id"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.program_id IS NULL THEN
    SELECT program_id INTO NEW.program_id FROM affiliate_sale_events WHERE id = NEW.sale_id;
  END IF;
  RETURN NEW;
END;
$$;--> statement-breakpoint
CREATE TRIGGER "refunds_set_program_id" BEFORE INSERT ON "refunds" FOR EACH ROW EXECUTE FUNCTION "refunds_set_program_id"();--> statement-breakpoint
CREATE INDEX "refunds_program_created_idx" ON "refunds" USING btree ("program_id","created_at");
