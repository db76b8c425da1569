import { sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { paymentIdsClaim, saleInserts } from "../../lib/tracking/sale/sale-store.ts";
import { createProgram, db, type ProgramFixture, postJson } from "./harness.ts";
import { click, commissionsOf, liveSaleValues, sale, salesOf, txn } from "./sale-harness.ts";

/** Issue 9 defect 1 and section 2: one id namespace for live sales, one per program for test sales. */
describe("payment id namespaces", () => {
  const testWays: Array<{ name: string; send: (p: ProgramFixture, id: string) => ReturnType<typeof sale> }> =
    [
      {
        name: "the test key",
        send: (p, id) => sale(p, { transaction_id: id, amount_cents: 500 }, p.testApiKey),
      },
      {
        name: "additional_data.test_mode",
        send: (p, id) =>
          sale(p, { transaction_id: id, amount_cents: 500, additional_data: { test_mode: true } }),
      },
      {
        name: "livemode false",
        send: (p, id) => sale(p, { transaction_id: id, amount_cents: 500, livemode: false }),
      },
    ];

  it.each(testWays)("a test sale by $name does not use up the live id", async ({ send }) => {
    const p = await createProgram({ commissionType: "percent", commissionRate: "10" });
    const id = txn();
    const test = await send(p, id);
    expect(test.status).toBe(200);
    expect(test.body).toMatchObject({ success: true, data: { test_mode: true } });
    const live = await sale(p, { transaction_id: id, amount_cents: 1000, click_id: await click(p) });
    expect(live.status).toBe(200);
    expect(live.body).toMatchObject({
      success: true,
      sale_id: expect.any(Number),
      commission_id: expect.any(Number),
    });
    expect((await commissionsOf(p.programId)).map((c) => c.amountCents)).toEqual([100]);
    // Each namespace still refuses its own second sale.
    expect((await send(p, id)).status).toBe(409);
    expect((await sale(p, { transaction_id: id, amount_cents: 1000, click_id: await click(p) })).status).toBe(
      409,
    );
  });

  it("another program's test sale uses up neither the live id nor this program's test id", async () => {
    const p = await createProgram({ commissionType: "percent", commissionRate: "10" });
    const other = await createProgram();
    const id = txn();
    expect((await sale(other, { transaction_id: id, amount_cents: 500 }, other.testApiKey)).status).toBe(200);
    const test = await sale(p, { transaction_id: id, amount_cents: 500 }, p.testApiKey);
    expect(test.status).toBe(200);
    const live = await sale(p, { transaction_id: id, amount_cents: 1000, click_id: await click(p) });
    expect(live.status).toBe(200);
    expect(live.body.commission_id).toEqual(expect.any(Number));
    expect((await salesOf(p.programId)).map((s) => [s.isTest, s.idNamespace])).toEqual([
      [true, `test:${p.programId}`],
      [false, "live"],
    ]);
  });

  it("a live sale first: the test sale of the same id is still recorded, as a test", async () => {
    const p = await createProgram();
    const id = txn();
    expect((await sale(p, { transaction_id: id, amount_cents: 1000, click_id: await click(p) })).status).toBe(
      200,
    );
    const test = await sale(p, { transaction_id: id, amount_cents: 500 }, p.testApiKey);
    expect(test.status).toBe(200);
    expect(test.body).toMatchObject({ data: { programId: p.programId, test_mode: true } });
  });

  it("writes every sale's id into the one ids index, in its namespace, linked to the sale", async () => {
    const p = await createProgram();
    const id = txn();
    const live = await sale(p, { transaction_id: id, amount_cents: 1000, click_id: await click(p) });
    const test = await sale(p, { transaction_id: id, amount_cents: 500 }, p.testApiKey);
    const rows = await db.execute(
      sql`select namespace, payment_id, sale_id from payment_aliases where alias = ${id} order by id`,
    );
    expect(rows.rows.map((r) => ({ ...r, sale_id: Number(r.sale_id) }))).toEqual([
      { namespace: "live", payment_id: id, sale_id: live.body.sale_id },
      {
        namespace: `test:${p.programId}`,
        payment_id: id,
        sale_id: (test.body.data as { eventId: number }).eventId,
      },
    ]);
  });

  it("the refund endpoint refunds the live sale, not the test sale of the same id", async () => {
    const p = await createProgram({ commissionType: "percent", commissionRate: "10" });
    const id = txn();
    await sale(p, { transaction_id: id, amount_cents: 500, additional_data: { test_mode: true } });
    const live = await sale(p, { transaction_id: id, amount_cents: 1000, click_id: await click(p) });
    const refund = await postJson(
      "/api/v1/track/refund",
      { transaction_id: id },
      { Authorization: `Bearer ${p.apiKey}` },
    );
    expect(refund.body).toEqual({
      success: true,
      status: "reversed",
      deductionAmount: 100,
      commission_id: live.body.commission_id,
    });
  });
});

/**
 * Migration 0049: the sale's own id goes into the ids index once, linked, by the sale's insert; the claim
 * writes only the payment's other ids, unlinked, for the link to link.
 */
describe("the sale write's ids statements", () => {
  const idsRows = (programId: number) =>
    db.execute<{ alias: string; payment_id: string; sale_id: string | null }>(sql`
      select alias, payment_id, sale_id from payment_aliases where program_id = ${programId} order by alias`);

  it("the claim writes the payment's other ids unlinked, not the sale's own", async () => {
    const p = await createProgram();
    const [own, other] = [`a-${txn()}`, `b-${txn()}`];
    await db.execute(
      paymentIdsClaim.call({
        programId: p.programId,
        namespace: "live",
        paymentId: own,
        ids: JSON.stringify([own, other]),
      }),
    );
    expect((await idsRows(p.programId)).rows).toEqual([{ alias: other, payment_id: own, sale_id: null }]);
  });

  it("the sale's insert writes its own id linked to it; an id already there is left to the link", async () => {
    const p = await createProgram();
    const id = txn();
    await db.execute(saleInserts.none.call(liveSaleValues(p.programId, id)));
    const [saleRow] = await salesOf(p.programId);
    expect((await idsRows(p.programId)).rows).toEqual([
      { alias: id, payment_id: id, sale_id: String(saleRow?.id) },
    ]);

    const kept = txn();
    await db.execute(sql`
      insert into payment_aliases (program_id, namespace, alias, payment_id, sale_id)
      values (${p.programId}, 'live', ${kept}, 'in_other', null)`);
    await db.execute(saleInserts.none.call(liveSaleValues(p.programId, kept)));
    expect((await idsRows(p.programId)).rows).toContainEqual({
      alias: kept,
      payment_id: "in_other",
      sale_id: null,
    });
  });
});
