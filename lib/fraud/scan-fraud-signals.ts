import type { Database } from "../db/client.ts";
import { copyFlagsToLateCommissions } from "./copy-flags-to-late-commissions.ts";
import { scanLeadSignals } from "./scan-lead-signals.ts";
import { scanSaleSignals } from "./scan-sale-signals.ts";

export interface FraudScanResult {
  leadsScanned: number;
  salesScanned: number;
  lateCommissionsFlagged: number;
}

/**
 * The fraud scan job (both crons; before approval in the five-minute one): leads first, so a sale finds its
 * customer's lead signals, then sales (and their commissions). Never on a request's path: it reads committed
 * rows after the fact, and nothing it finds blocks a tracking call. Idempotent and safe to run concurrently
 * with itself (each statement claims its rows with `skip locked` and marks them scanned).
 */
export async function scanFraudSignals(db: Database, now: Date): Promise<FraudScanResult> {
  const leadsScanned = await scanLeadSignals(db, now);
  const salesScanned = await scanSaleSignals(db, now);
  const lateCommissionsFlagged = await copyFlagsToLateCommissions(db, now);
  return { leadsScanned, salesScanned, lateCommissionsFlagged };
}
