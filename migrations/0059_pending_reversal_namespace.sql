-- A reversal kept before its sale (a refund or dispute event arriving first) records its mode's namespace
-- (`live`, or `test:<program>` for a `livemode: false` event), and applies only to a sale of that namespace. It was
-- applied to whichever sale the payment id found, read back as live: a test-mode refund of a payment id reversed
-- the live sale later recorded under it, commission and partner balance included. Rows kept so far are live.
ALTER TABLE "stripe_pending_reversals" ADD COLUMN "namespace" text DEFAULT 'live' NOT NULL;
