import { sql } from "drizzle-orm";
import { describe, expect, inject, it } from "vitest";
import { scanLeadSignals } from "../../lib/fraud/scan-lead-signals.ts";
import { scanSaleSignals } from "../../lib/fraud/scan-sale-signals.ts";
import {
  ageClickAndCustomer,
  clickFrom,
  commissionOfSale,
  leadFrom,
  leadRows,
  newDevice,
  saleFlags,
} from "./fraud-harness.ts";
import { createProgram, db, unique } from "./harness.ts";
import { sale, txn } from "./sale-harness.ts";

/** How many rows of `table` a run stamped with `at` (each run marks what it claimed with its own time). */
async function stampedBy(
  table: "affiliate_lead_events" | "affiliate_sale_events",
  at: Date,
): Promise<number> {
  const result = await db.execute<{ n: number }>(
    sql`select count(*)::int as n from ${sql.identifier(table)} where fraud_scanned_at = ${at.toISOString()}::timestamptz`,
  );
  return Number(result.rows[0]?.n);
}

/**
 * Runs only with DATABASE_URL (a real multi-connection PostgreSQL; PGlite is one session and would serialise
 * the runs). Several scans at once claim with `skip locked`: each row is taken by exactly one run (each run's
 * count equals the rows stamped with its time), none fails, and the verdicts are those of a single run.
 */
describe("the fraud scan under concurrency (PostgreSQL)", () => {
  it("four lead scans at once: every lead taken once, no run fails, the same verdicts", async () => {
    expect(inject("databaseBackend")).toBe("postgres");
    const p = await createProgram();
    const partnerPhone = newDevice();
    const ids: number[] = [];
    for (let i = 0; i < 24; i++) {
      const device = i % 2 === 0 ? partnerPhone : newDevice();
      const clickId = await clickFrom(p, device);
      await ageClickAndCustomer(clickId);
      ids.push(await leadFrom(p, device, { click_id: clickId, email: `${unique(`c${i}`)}@example.com` }));
    }
    const base = Date.now();
    const runs = [0, 1, 2, 3].map((i) => new Date(base - 10_000 - i));
    const counts = await Promise.all(runs.map((at) => scanLeadSignals(db, at, 8)));
    for (const [i, at] of runs.entries())
      expect(await stampedBy("affiliate_lead_events", at)).toBe(counts[i]);
    // Whatever the runs did not reach (other rows came first), a later run scans.
    for (let i = 0; i < 50 && (await leadRows(ids)).some((r) => r.fraudScannedAt === null); i++) {
      await scanLeadSignals(db, new Date());
    }
    const rows = await leadRows(ids);
    // The partner's phone: from its second customer on, partner_device; from its fifth in the hour, ip_velocity.
    expect(rows.map((r) => r.fraudFlags)).toEqual(
      ids.map((_, i) => {
        if (i % 2 === 1) return [];
        const nth = i / 2 + 1;
        return nth >= 5 ? ["ip_velocity", "partner_device"] : nth >= 2 ? ["partner_device"] : [];
      }),
    );
  });

  it("two sale scans at once: each sale taken once, its commission flagged once", async () => {
    expect(inject("databaseBackend")).toBe("postgres");
    const p = await createProgram();
    const saleIds: number[] = [];
    for (let i = 0; i < 10; i++) {
      const clickId = await clickFrom(p, newDevice());
      const response = await sale(p, { transaction_id: txn(), amount_cents: 1000, click_id: clickId });
      saleIds.push(response.body.sale_id as number);
    }
    const base = Date.now();
    const runs = [new Date(base - 20_000), new Date(base - 20_001)];
    const counts = await Promise.all(runs.map((at) => scanSaleSignals(db, at, 6)));
    for (const [i, at] of runs.entries())
      expect(await stampedBy("affiliate_sale_events", at)).toBe(counts[i]);
    for (let i = 0; i < 50; i++) {
      const pending = await Promise.all(saleIds.map(saleFlags));
      if (pending.every((s) => s.fraudScannedAt !== null)) break;
      await scanSaleSignals(db, new Date());
    }
    for (const id of saleIds) {
      expect((await saleFlags(id)).fraudFlags).toEqual(["fast_conversion"]);
      expect((await commissionOfSale(id)).fraudFlags).toEqual(["fast_conversion"]);
    }
  });
});
