import { eq } from "drizzle-orm";
import { analyticsRollupProgress } from "../../../schema/analytics.ts";
import type { AnalyticsQuery } from "../../analytics/analytics-request.ts";
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
  const [progress] = await db
    .select({
      hoursUntil: analyticsRollupProgress.hoursUntil,
      daysUntil: analyticsRollupProgress.daysUntil,
      monthsUntil: analyticsRollupProgress.monthsUntil,
    })
    .from(analyticsRollupProgress)
    .where(eq(analyticsRollupProgress.programId, programId));
  return readAnalytics(db, programId, query, {
    hoursUntil: progress?.hoursUntil ?? null,
    daysUntil: progress?.daysUntil ?? null,
    monthsUntil: progress?.monthsUntil ?? null,
  });
}
