-- Fraud signals (issue 16, section 2). Never blocking by default: flags are stored beside the rows they
-- describe and read by readiness, the dashboard and the events route.
-- The device of a click and of a browser lead, as keyed hashes (never the address or the user agent itself),
-- so a conversion can be compared with the partner's own clicks and with other customers of one address.
ALTER TABLE "affiliate_click_events" ADD COLUMN "ip_hash" text;--> statement-breakpoint
ALTER TABLE "affiliate_click_events" ADD COLUMN "ua_hash" text;--> statement-breakpoint
ALTER TABLE "affiliate_lead_events" ADD COLUMN "ip_hash" text;--> statement-breakpoint
ALTER TABLE "affiliate_lead_events" ADD COLUMN "ua_hash" text;--> statement-breakpoint
-- The signals found for a row, by code (see lib/fraud/); empty when none.
ALTER TABLE "affiliate_lead_events" ADD COLUMN "fraud_flags" text[] DEFAULT '{}'::text[] NOT NULL;--> statement-breakpoint
ALTER TABLE "affiliate_sale_events" ADD COLUMN "fraud_flags" text[] DEFAULT '{}'::text[] NOT NULL;--> statement-breakpoint
ALTER TABLE "commissions" ADD COLUMN "fraud_flags" text[] DEFAULT '{}'::text[] NOT NULL;--> statement-breakpoint
-- Program settings: hold flagged commissions for review when their hold ends, instead of approving them;
-- attribute a payment found by email only to a settled (not provisional) lead.
ALTER TABLE "programs" ADD COLUMN "hold_flagged_commissions" boolean DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE "programs" ADD COLUMN "email_attribution_settled_only" boolean DEFAULT false NOT NULL;
