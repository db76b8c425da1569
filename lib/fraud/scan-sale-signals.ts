import { sql } from "drizzle-orm";
import type { Database } from "../db/client.ts";
import { fraudScanBatch, fraudThresholds as t } from "./fraud-codes.ts";

/**
 * Scans the sales not scanned yet (oldest first, at most `limit`) whose customer's leads are all scanned (their
 * signals must be known first; the lead scan runs before, in the same job), and stores their signals on the
 * sale and on its commission, in ONE statement: the SQL function `fraud_scan_sales` (migration 0020), which
 * claims the sales `for update skip locked` (concurrent runs take different sales; a sale once marked is never
 * taken again). A sale gets its customer's lead signals, plus its own:
 * - `fast_conversion`: the sale came less than `fastSaleSeconds` after the customer's click;
 * - `lead_steering`: a payment from the provider settled a customer that no lead confirmed by the brand's
 *   server ever did: every lead of the customer is provisional (keyless under `server_required`), and one of
 *   them carried the email the customer now holds. That is the steering attack: a keyless lead with someone
 *   else's email, which a later payment by that buyer, found by email, pays out.
 * Returns how many sales were scanned.
 */
export async function scanSaleSignals(db: Database, now: Date, limit = fraudScanBatch): Promise<number> {
  const result = await db.execute<{ scanned: number }>(sql`
    select fraud_scan_sales(${now.toISOString()}::timestamptz, ${limit}::int, ${t.fastSaleSeconds}::int) as scanned`);
  return Number(result.rows[0]?.scanned ?? 0);
}
