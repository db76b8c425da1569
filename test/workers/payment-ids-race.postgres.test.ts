import { sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { paymentIdsClaim, saleInserts, saleLinkAndFinish } from "../../lib/tracking/sale/sale-store.ts";
import { createProgram, db } from "./harness.ts";
import { liveSaleValues, salesOf, txn } from "./sale-harness.ts";

/**
 * The ids statements of a sale's write (claim, sale row, link with its guard), as `writeSale` sends them, in
 * one transaction that sleeps `afterClaim` seconds after the claim and `beforeCommit` seconds at its end.
 */
function writeSale(
  programId: number,
  paymentId: string,
  ids: string[],
  hold: { afterClaim: number; beforeCommit: number; rollBack?: boolean },
) {
  const payment = { namespace: "live", ids: JSON.stringify(ids) };
  const now = new Date().toISOString();
  return db.batch([
    db.execute(paymentIdsClaim.call({ ...payment, programId, paymentId })),
    db.execute(sql`select pg_sleep(${hold.afterClaim}::float8)`),
    db.execute(saleInserts.none.call(liveSaleValues(programId, paymentId, now))),
    db.execute(saleLinkAndFinish.call({ ...payment, processorEventId: paymentId, at: now })),
    db.execute(sql`select pg_sleep(${hold.beforeCommit}::float8)`),
    // A failing last statement rolls the whole write back, as a failure after its claim would.
    db.execute(hold.rollBack ? sql`select 1 / 0` : sql`select 1`),
  ]);
}

const sleep = (seconds: number) => new Promise((resolve) => setTimeout(resolve, seconds * 1000));

/** Two sales of one payment (two ids, one shared, kept unlinked before either, as provider aliases are). */
async function twoSalesOfOnePayment() {
  const p = await createProgram();
  const [first, second, shared] = [txn(), txn(), txn()];
  await db.execute(sql`
    insert into payment_aliases (program_id, namespace, alias, payment_id, sale_id)
    values (${p.programId}, 'live', ${shared}, ${first}, null)`);
  const linkedAliases = async () =>
    (
      await db.execute<{ alias: string }>(sql`
        select alias from payment_aliases where program_id = ${p.programId} and sale_id is not null`)
    ).rows
      .map((row) => row.alias)
      .sort();
  return { p, first, second, shared, linkedAliases };
}

// Needs a real multi-connection PostgreSQL (PGlite is one session): runs when DATABASE_URL is set. Neither
// claim waits here (the shared id's row is there already), so only the link's guard can tell.
describe("two sales of one payment linking the same id at once (PostgreSQL)", () => {
  it("the second waits at the link for the first's row, then fails its guard: one sale", async () => {
    const { p, first, second, shared, linkedAliases } = await twoSalesOfOnePayment();
    // first: claim at 0, link at 0.4 (locks the shared row), commit at 1.0;
    // second: claim at 0.2, link at 0.6, waits for the first to commit, then finds the row linked.
    const firstWrite = writeSale(p.programId, first, [first, shared], { afterClaim: 0.4, beforeCommit: 0.6 });
    await sleep(0.2);
    const secondWrite = writeSale(p.programId, second, [second, shared], {
      afterClaim: 0.4,
      beforeCommit: 0,
    });

    await expect(firstWrite).resolves.toBeDefined();
    await expect(secondWrite).rejects.toThrow("guard failed: payment recorded meanwhile");
    expect((await salesOf(p.programId)).map((s) => s.processorEventId)).toEqual([first]);
    expect(await linkedAliases()).toEqual([first, shared].sort());
  });

  it("the other sale links the shared id and commits while this one writes: this one fails", async () => {
    const { p, first, second, shared, linkedAliases } = await twoSalesOfOnePayment();
    const firstWrite = writeSale(p.programId, first, [first, shared], { afterClaim: 0.6, beforeCommit: 0 });
    await sleep(0.2);
    await writeSale(p.programId, second, [second, shared], { afterClaim: 0, beforeCommit: 0 });

    await expect(firstWrite).rejects.toThrow("guard failed: payment recorded meanwhile");
    expect((await salesOf(p.programId)).map((s) => s.processorEventId)).toEqual([second]);
    expect(await linkedAliases()).toEqual([second, shared].sort());
  });
});

/**
 * Migration 0049: a sale writes its own id into the ids index with its row, after its claim. Another sale's
 * claim may hold that id (as an alias of its payment) uncommitted: the insert waits for it.
 */
describe("a sale whose own id another sale's write holds as an alias (PostgreSQL)", () => {
  async function aliasOfOther() {
    const p = await createProgram();
    const [other, own] = [txn(), txn()];
    const aliasesOf = async () =>
      (
        await db.execute<{ alias: string; sale_id: string | null }>(sql`
          select alias, sale_id from payment_aliases where program_id = ${p.programId} order by alias`)
      ).rows;
    return { p, other, own, aliasesOf };
  }

  it("the other commits: this sale's insert waits for it, then the link's guard fails it", async () => {
    const { p, other, own, aliasesOf } = await aliasOfOther();
    // other: claims [other, own] at 0, commits at about 0.4; this: its insert of own at 0.2 waits for it.
    const otherWrite = writeSale(p.programId, other, [other, own], { afterClaim: 0.4, beforeCommit: 0 });
    await sleep(0.2);
    const thisWrite = writeSale(p.programId, own, [own], { afterClaim: 0, beforeCommit: 0 });

    await expect(otherWrite).resolves.toBeDefined();
    await expect(thisWrite).rejects.toThrow("guard failed: payment recorded meanwhile");
    const [otherSale] = await salesOf(p.programId);
    expect(otherSale?.processorEventId).toBe(other);
    expect(await aliasesOf()).toEqual(
      [other, own].sort().map((alias) => ({ alias, sale_id: String(otherSale?.id) })),
    );
  });

  it("the other rolls back: this sale's insert, having waited, writes its id linked to it", async () => {
    const { p, other, own, aliasesOf } = await aliasOfOther();
    const otherWrite = writeSale(p.programId, other, [other, own], {
      afterClaim: 0.4,
      beforeCommit: 0,
      rollBack: true,
    });
    await sleep(0.2);
    const thisWrite = writeSale(p.programId, own, [own], { afterClaim: 0, beforeCommit: 0 });

    await expect(otherWrite).rejects.toThrow("division by zero");
    await expect(thisWrite).resolves.toBeDefined();
    const [thisSale, ...more] = await salesOf(p.programId);
    expect(more).toEqual([]);
    expect(thisSale?.processorEventId).toBe(own);
    expect(await aliasesOf()).toEqual([{ alias: own, sale_id: String(thisSale?.id) }]);
  });
});
