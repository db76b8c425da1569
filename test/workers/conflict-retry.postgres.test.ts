import { sql } from "drizzle-orm";
import { beforeAll, describe, expect, it } from "vitest";
import { withConflictRetry } from "../../lib/db/errors.ts";
import { db } from "./harness.ts";

/**
 * Two transactions that lock the same two rows in opposite orders: PostgreSQL ends one of them (`40P01`),
 * and `withConflictRetry` runs that attempt again whole. Needs a real multi-connection PostgreSQL (PGlite is
 * one session): runs when DATABASE_URL is set.
 */
describe("withConflictRetry on a deadlock (PostgreSQL)", () => {
  beforeAll(async () => {
    await db.execute(
      sql`create table if not exists conflict_retry_probe (id bigint primary key, n int not null)`,
    );
  });

  /** Adds one to both rows, `first` first, holding it while the other transaction takes the other row. */
  const addToBoth = (first: number, second: number) =>
    db.batch([
      db.execute(sql`update conflict_retry_probe set n = n + 1 where id = ${first}`),
      db.execute(sql`select pg_sleep(0.3)`),
      db.execute(sql`update conflict_retry_probe set n = n + 1 where id = ${second}`),
    ]);

  it("runs the transaction PostgreSQL ended to break the deadlock again: both add, once each", async () => {
    const base = Date.now() * 10;
    const [a, b] = [base, base + 1];
    await db.execute(sql`insert into conflict_retry_probe (id, n) values (${a}, 0), (${b}, 0)`);
    const attempts = { ab: 0, ba: 0 };
    const results = await Promise.allSettled([
      withConflictRetry(() => {
        attempts.ab += 1;
        return addToBoth(a, b);
      }),
      withConflictRetry(() => {
        attempts.ba += 1;
        return addToBoth(b, a);
      }),
    ]);

    expect(results.map((r) => r.status)).toEqual(["fulfilled", "fulfilled"]);
    expect(attempts.ab + attempts.ba).toBe(3);
    const rows = await db.execute<{ id: string; n: number }>(
      sql`select id, n from conflict_retry_probe where id in (${a}, ${b}) order by id`,
    );
    expect(rows.rows.map((r) => r.n)).toEqual([2, 2]);
  });
});
