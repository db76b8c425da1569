import type { Database } from "../db/client.ts";
import type { AnalyticsQuery } from "./analytics-request.ts";
import { readSources } from "./analytics-store.ts";
import { type AnalyticsReport, buildReport } from "./build-report.ts";
import { type RollupReach, tileRange } from "./tiling.ts";

/**
 * Analytics by source for one program: the range is tiled into rollup pieces and raw pieces (`tileRange`),
 * summed in one statement, and shaped into the report. `reach` comes from the caller's first read (with the
 * key), so the request costs two round trips whatever the range.
 */
export async function readAnalytics(
  db: Database,
  programId: number,
  query: AnalyticsQuery,
  reach: RollupReach,
): Promise<AnalyticsReport> {
  const segments = tileRange(query.from, query.to, reach);
  const read = await readSources(db, { programId, dimension: query.dimension, segments, limit: query.limit });
  return buildReport(programId, query, read);
}
