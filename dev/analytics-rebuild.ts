/**
 * `npm run analytics:rebuild [program id ...]`: throws away the analytics rollups (of the given programs, or
 * all) and rolls them up again from the raw events, on the PostgreSQL of `DATABASE_URL` (migrated first),
 * through the same code as the scheduled job (`rebuildRollups`). While it runs, answers for the programs
 * being rebuilt come from the raw events, so they stay exact. Prints the rows written.
 */
import { openLocalDatabase, requirePostgresUrl } from "../bench/analytics-db.ts";
import { rebuildRollups } from "../lib/analytics/rollups.ts";

const databaseUrl = requirePostgresUrl("DATABASE_URL", process.env.DATABASE_URL);
const programIds = process.argv.slice(2).map((arg) => {
  const id = Number(arg);
  if (!Number.isInteger(id) || id < 1) {
    console.error(`not a program id: ${arg}`);
    process.exit(2);
  }
  return id;
});
const { db, endpoint } = await openLocalDatabase(databaseUrl);
try {
  const started = Date.now();
  const run = await rebuildRollups(db, new Date(), programIds.length > 0 ? { programIds } : {});
  console.log(
    `rebuilt ${programIds.length > 0 ? `programs ${programIds.join(", ")}` : "every program"}: ` +
      `${run.rows} rollup rows in ${((Date.now() - started) / 1000).toFixed(1)} s`,
  );
} finally {
  await endpoint.close();
}
