import type { AnalyticsQuery } from "../../analytics/analytics-request.ts";
import { readReach } from "../../analytics/analytics-store.ts";
import type { AnalyticsReport } from "../../analytics/build-report.ts";
import { readAnalytics } from "../../analytics/read-analytics.ts";
import type { Database } from "../../db/client.ts";

/**
 * Analytics by source for a program chosen by id (the page's table): the program route finds the program
 * through its key, the page through the signed-in person's membership, so the rollup reach is read by id.
 */
export async function readProgramAnalytics(
  db: Database,
  programId: number,
  query: AnalyticsQuery,
): Promise<AnalyticsReport> {
  return readAnalytics(db, programId, query, await readReach(db, programId));
}
