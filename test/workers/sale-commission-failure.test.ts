import { sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { saleIdConstraint } from "../../lib/sales/payment-namespace.ts";
import { createProgram, db } from "./harness.ts";
import { runCron } from "./run-cron.ts";
import { balanceOf, click, commissionsOf, sale, salesOf, txn } from "./sale-harness.ts";
import { endpointFor, eventsOf } from "./webhook-harness.ts";

/**
 * The spec's commission-failure contract, with a real database failure: a trigger makes inserting this
 * program's commissions fail, as a constraint or outage would.
 */
async function breakCommissionsOf(programId: number): Promise<() => Promise<void>> {
  await db.execute(
    sql.raw(`
    create or replace function fail_commission_for_tests() returns trigger language plpgsql as $$
    begin raise exception 'commission store unavailable (test)'; end $$`),
  );
  const trigger = `fail_commissions_${programId}`;
  await db.execute(
    sql.raw(`create trigger ${trigger} before insert on commissions for each row
             when (new.program_id = ${programId}) execute function fail_commission_for_tests()`),
  );
  return async () => {
    await db.execute(sql.raw(`drop trigger if exists ${trigger} on commissions`));
  };
}

describe("commission creation failure", () => {
  it("answers 500 Failed to create commission, consumes the transaction_id, and the cron creates it later", async () => {
    const p = await createProgram({ commissionType: "percent", commissionRate: "10" });
    await endpointFor(p.programId, "https://hooks.brand.example/affiliate", ["commission.created"]);
    const clickId = await click(p);
    const repair = await breakCommissionsOf(p.programId);
    const body = { transaction_id: txn(), amount_cents: 5000, click_id: clickId };
    let response: Awaited<ReturnType<typeof sale>>;
    try {
      response = await sale(p, body);
      expect(response.status).toBe(500);
      expect(response.body).toEqual({
        data: null,
        error: {
          status: 500,
          name: "InternalServerError",
          message: "Failed to create commission",
          details: {},
          code: "internal_error",
        },
      });
      const [stored] = await salesOf(p.programId);
      expect(stored).toMatchObject({ needsCommission: true, partnerId: p.partnerIds[0] });
      expect(await commissionsOf(p.programId)).toHaveLength(0);

      const retry = await sale(p, body);
      expect(retry.status).toBe(409);
      expect((retry.body.error as { details: unknown }).details).toEqual({ sale_id: stored?.id });

      await runCron(); // still failing: the sale stays flagged for the next run
      expect((await salesOf(p.programId))[0]?.needsCommission).toBe(true);
    } finally {
      await repair();
    }
    await Promise.all([runCron(), runCron()]); // two runs at once repair it exactly once
    const commissions = await commissionsOf(p.programId);
    expect(commissions).toHaveLength(1);
    expect(commissions[0]).toMatchObject({ amountCents: 500, status: "approved" });
    expect((await salesOf(p.programId))[0]?.needsCommission).toBe(false);
    expect(await balanceOf(p.programId, p.partnerIds[0])).toBe(500);
    // The repair's transaction tells the brand, once: the failed sale call wrote no commission.created.
    const created = (await eventsOf(p.programId)).filter((e) => e.type === "commission.created");
    expect(created).toHaveLength(1);
    expect(created[0]?.data).toMatchObject({ commission_id: commissions[0]?.id, amount_cents: 500 });
  });

  it("a sale id the database refuses as taken (a concurrent writer's) is re-read and re-decided, not taken for a failed commission", async () => {
    const p = await createProgram({ commissionType: "percent", commissionRate: "10" });
    const clickId = await click(p);
    // The sale's first insert is refused as a concurrent writer's would be: the sale id's unique index, once (a
    // sequence counts the inserts: unlike a row, it is not rolled back with the refused write).
    const inserts = `sale_inserts_for_tests_${p.programId}`;
    await db.execute(sql.raw(`create sequence ${inserts}`));
    await db.execute(
      sql.raw(`
      create or replace function take_sale_id_once_for_tests() returns trigger language plpgsql as $$
      begin
        if nextval('sale_inserts_for_tests_' || new.program_id) = 1 then
          raise unique_violation using message = 'duplicate key (test)', constraint = '${saleIdConstraint}';
        end if;
        return new;
      end $$`),
    );
    const trigger = `take_sale_id_once_${p.programId}`;
    await db.execute(
      sql.raw(`create trigger ${trigger} before insert on affiliate_sale_events for each row
               when (new.program_id = ${p.programId}) execute function take_sale_id_once_for_tests()`),
    );
    try {
      const response = await sale(p, { transaction_id: txn(), amount_cents: 5000, click_id: clickId });
      expect(response.status).toBe(200);
      expect(response.body).toMatchObject({ sale_id: expect.any(Number), commission_id: expect.any(Number) });
      const [stored] = await salesOf(p.programId);
      expect(stored?.needsCommission).toBe(false);
      expect(await commissionsOf(p.programId)).toHaveLength(1);
    } finally {
      await db.execute(sql.raw(`drop trigger if exists ${trigger} on affiliate_sale_events`));
      await db.execute(sql.raw("drop function if exists take_sale_id_once_for_tests()"));
      await db.execute(sql.raw(`drop sequence if exists ${inserts}`));
    }
  });
});
