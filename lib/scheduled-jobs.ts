import type { Clock } from "./clock.ts";
import { repairMissingCommissions } from "./commissions/repair-missing-commissions.ts";
import type { Database } from "./db/client.ts";

/** What the cron trigger runs: each job is idempotent and safe to run concurrently with itself. */
export async function runScheduledJobs(db: Database, clock: Clock): Promise<Record<string, number>> {
  const now = clock.now();
  return { commissionsRepaired: await repairMissingCommissions(db, now) };
}
