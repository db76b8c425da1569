import { sql } from "drizzle-orm";
import type { Database } from "../db/client.ts";
import { fraudScanBatch, fraudThresholds as t } from "./fraud-codes.ts";

/**
 * Scans the leads not scanned yet (oldest first, at most `limit`) and stores their signals, in ONE statement:
 * the SQL function `fraud_scan_leads` (migration 0020; kept in the database so its text does not weigh on the
 * worker bundle). It claims the leads `for update skip locked`, so two runs at the same time take different
 * leads, and a lead once marked `fraud_scanned_at` is never taken again (running twice changes nothing). The
 * signals read only rows written before the lead (its click, the earlier leads of its address), so a later row
 * never changes an earlier verdict. Returns how many leads were scanned.
 *
 * - `self_referral`: the email is the partner's own (same hash of the normalised address), or shares the
 *   partner's domain when that domain is private (not a public or disposable mail provider).
 * - `disposable_email`: the domain (or its parent, for lists that cover every subdomain) is disposable.
 * - `fast_conversion`: the lead came less than `fastLeadSeconds` after its click.
 * - `ip_velocity`: with this lead, `velocityCustomers` or more distinct customers' leads came from its address
 *   in the program within `velocityWindowSeconds`.
 * - `partner_device`: the address already sent, within `partnerDeviceWindowDays`, a lead of ANOTHER customer
 *   of the same partner in the program: one device converting for several customers of one partner is the
 *   partner's own device (a real customer converts once).
 * Test and live leads are compared only with their own kind.
 */
export async function scanLeadSignals(db: Database, now: Date, limit = fraudScanBatch): Promise<number> {
  const result = await db.execute<{ scanned: number }>(sql`
    select fraud_scan_leads(${now.toISOString()}::timestamptz, ${limit}::int, ${t.fastLeadSeconds}::int,
      ${t.velocityCustomers}::int, ${t.velocityWindowSeconds}::int, ${t.partnerDeviceWindowDays}::int) as scanned`);
  return Number(result.rows[0]?.scanned ?? 0);
}
