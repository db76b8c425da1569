import { eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { commissions } from "../../schema/index.ts";
import { balanceOf } from "../workers/sale-harness.ts";
import {
  api,
  type ConnectedProgram,
  charge,
  checkoutSession,
  click,
  connectedProgram,
  db,
  deliver,
  dispute,
  event,
  id,
  invoice,
  pendingOf,
  refundsOfSale,
  saleByPayment,
  saleCall,
} from "./stripe-harness.ts";

async function commissionOfSale(saleId: number) {
  const [row] = await db.select().from(commissions).where(eq(commissions.saleId, saleId));
  return row;
}

/** A paid checkout of 100.00 attributed to partner A: a 20.00 approved commission, credited. */
async function paidCheckout(p: ConnectedProgram, amount = 10_000) {
  const clickId = await click(p);
  const session = checkoutSession({ amount, metadata: { service_click_id: clickId } });
  const response = await deliver(event("checkout.session.completed", session, { account: p.accountId }));
  expect(response.body.outcome).toBe("recorded");
  return { paymentIntent: String(session.payment_intent), saleId: Number(response.body.sale_id) };
}

function refunded(p: ConnectedProgram, paymentIntent: string, amountRefunded: number, refundIds?: string[]) {
  return event(
    "charge.refunded",
    charge({ paymentIntent, amount: 10_000, amountRefunded, ...(refundIds ? { refundIds } : {}) }),
    { account: p.accountId },
  );
}

describe("charge.refunded", () => {
  it("reduces the commission by each partial refund, from the charge's cumulative refunded amount", async () => {
    const p = await connectedProgram({ commissionRate: "20" });
    const { paymentIntent, saleId } = await paidCheckout(p);
    expect(await balanceOf(p.programId, p.partnerIds[0])).toBe(2_000);

    const first = await deliver(refunded(p, paymentIntent, 3_000, ["re_first"]));
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ outcome: "refunded" });
    expect(await commissionOfSale(saleId)).toMatchObject({ status: "refunded", deductedCents: 600 });
    expect(await balanceOf(p.programId, p.partnerIds[0])).toBe(1_400);

    // The second refund's event lists both refunds, newest first; the cumulative amount is 50.00.
    const second = await deliver(refunded(p, paymentIntent, 5_000, ["re_second", "re_first"]));
    expect(second.body).toMatchObject({ outcome: "refunded" });
    expect(await commissionOfSale(saleId)).toMatchObject({ status: "refunded", deductedCents: 1_000 });
    expect(await balanceOf(p.programId, p.partnerIds[0])).toBe(1_000);
    expect((await refundsOfSale(saleId)).map((r) => [r.refundId, r.amountCents, r.reason])).toEqual([
      ["re_first", 3_000, "refund"],
      ["re_second", 2_000, "refund"],
    ]);
    expect((await saleByPayment(paymentIntent))?.refundedCents).toBe(5_000);
  });

  it("applies nothing twice: a replayed or an older event arriving late adds no refund", async () => {
    const p = await connectedProgram({ commissionRate: "20" });
    const { paymentIntent, saleId } = await paidCheckout(p);
    // Out of order: the event of the second refund (cumulative 50.00) arrives before the first's (30.00).
    const later = refunded(p, paymentIntent, 5_000);
    const earlier = refunded(p, paymentIntent, 3_000);
    expect((await deliver(later)).body).toMatchObject({ outcome: "refunded" });
    expect((await deliver(earlier)).body).toMatchObject({
      outcome: "skipped",
      reason: "refund already recorded",
    });
    // The same event delivered again (a new event id with the same charge state, as a re-sent event is).
    const again = refunded(p, paymentIntent, 5_000);
    expect((await deliver(again)).body).toMatchObject({ outcome: "skipped" });
    const rows = await refundsOfSale(saleId);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ amountCents: 5_000 });
    expect(await commissionOfSale(saleId)).toMatchObject({ deductedCents: 1_000 });
    expect(await balanceOf(p.programId, p.partnerIds[0])).toBe(1_000);
  });

  it("reverses the commission on a full refund", async () => {
    const p = await connectedProgram({ commissionRate: "20" });
    const { paymentIntent, saleId } = await paidCheckout(p);
    const response = await deliver(refunded(p, paymentIntent, 10_000, [id("re")]));
    expect(response.body).toMatchObject({ outcome: "reversed" });
    expect(await commissionOfSale(saleId)).toMatchObject({ status: "reversed", deductedCents: 2_000 });
    expect(await balanceOf(p.programId, p.partnerIds[0])).toBe(0);
  });

  it("refunds a renewal recorded from a legacy invoice (PaymentIntent id)", async () => {
    const p = await connectedProgram({ commissionType: "recurring_percent", commissionRate: "10" });
    const clickId = await click(p);
    const inv = invoice({ legacy: true, amount: 10_000, metadata: { service_click_id: clickId } });
    await deliver(event("invoice.paid", inv, { account: p.accountId }));
    const sale = await saleByPayment(String(inv.payment_intent));
    const response = await deliver(refunded(p, String(inv.payment_intent), 10_000));
    expect(response.body).toMatchObject({ outcome: "reversed" });
    expect(await commissionOfSale(sale!.id)).toMatchObject({ status: "reversed" });
  });

  it("does not touch a sale recorded by the sale endpoint under the same id (spec: not linked)", async () => {
    const p = await connectedProgram({ commissionRate: "20" });
    const clickId = await click(p);
    const paymentIntent = id("pi");
    const api = await saleCall(p, { transaction_id: paymentIntent, amount_cents: 10_000, click_id: clickId });
    const response = await deliver(refunded(p, paymentIntent, 10_000));
    expect(response.body).toMatchObject({ outcome: "not_linked" });
    expect(await commissionOfSale(Number(api.body.sale_id))).toMatchObject({ status: "approved" });
    expect(await pendingOf(p.programId)).toHaveLength(0);
  });
});

describe("charge.refunded listing several refunds", () => {
  const refundCall = (p: ConnectedProgram, body: Record<string, unknown>) =>
    api("/api/v1/track/refund", body, { Authorization: `Bearer ${p.apiKey}` });
  const listing = (
    p: ConnectedProgram,
    paymentIntent: string,
    total: number,
    ids: string[],
    amounts: number[],
  ) =>
    event(
      "charge.refunded",
      charge({
        paymentIntent,
        amount: 10_000,
        amountRefunded: total,
        refundIds: ids,
        refundAmounts: amounts,
      }),
      { account: p.accountId },
    );

  it("records each listed refund under its own id: the refund endpoint sent an older one later finds it applied", async () => {
    const p = await connectedProgram({ commissionRate: "20" });
    const { paymentIntent, saleId } = await paidCheckout(p);
    // The first refund's own event is late: the second's lists both.
    const both = await deliver(listing(p, paymentIntent, 6_000, ["re_new", "re_old"], [2_000, 4_000]));
    expect(both.body).toMatchObject({ outcome: "refunded" });
    expect(
      (await refundsOfSale(saleId)).map((r) => [r.idempotencyKey, r.amountCents, r.deductionCents]),
    ).toEqual([
      ["id:re_old", 4_000, 800],
      ["id:re_new", 2_000, 400],
    ]);
    const again = await refundCall(p, {
      transaction_id: paymentIntent,
      refund_amount_cents: 4_000,
      refund_id: "re_old",
    });
    expect(again.body).toMatchObject({
      success: true,
      status: "skipped",
      reason: "refund_id already applied",
    });
    expect((await deliver(listing(p, paymentIntent, 4_000, ["re_old"], [4_000]))).body).toMatchObject({
      outcome: "skipped",
    });
    expect(await commissionOfSale(saleId)).toMatchObject({ status: "refunded", deductedCents: 1_200 });
    expect(await balanceOf(p.programId, p.partnerIds[0])).toBe(800);
  });

  it("skips a listed refund the refund endpoint applied first, and applies the rest", async () => {
    const p = await connectedProgram({ commissionRate: "20" });
    const { paymentIntent, saleId } = await paidCheckout(p);
    const first = await refundCall(p, {
      transaction_id: paymentIntent,
      refund_amount_cents: 4_000,
      refund_id: "re_a",
    });
    expect(first.body).toMatchObject({ status: "refunded" });
    const both = await deliver(listing(p, paymentIntent, 10_000, ["re_b", "re_a"], [6_000, 4_000]));
    expect(both.body).toMatchObject({ outcome: "reversed" });
    expect((await refundsOfSale(saleId)).map((r) => [r.idempotencyKey, r.amountCents])).toEqual([
      ["id:re_a", 4_000],
      ["id:re_b", 6_000],
    ]);
    expect(await balanceOf(p.programId, p.partnerIds[0])).toBe(0);
  });

  it("applies the older listed refund when the refund endpoint sent the newest first, and what is left of it", async () => {
    const p = await connectedProgram({ commissionRate: "20" });
    const { paymentIntent, saleId } = await paidCheckout(p);
    // The brand refunded the newest through the endpoint, for 1,000 less than the provider counts.
    const sent = await refundCall(p, {
      transaction_id: paymentIntent,
      refund_amount_cents: 5_000,
      refund_id: "re_b",
    });
    expect(sent.body).toMatchObject({ status: "refunded" });
    const both = listing(p, paymentIntent, 10_000, ["re_b", "re_a"], [6_000, 4_000]);
    expect((await deliver(both)).body).toMatchObject({ outcome: "reversed" });
    expect((await refundsOfSale(saleId)).map((r) => [r.idempotencyKey, r.amountCents])).toEqual([
      ["id:re_b", 5_000],
      ["id:re_a", 4_000],
      ["id:re_b:rest:10000", 1_000],
    ]);
    // The event again adds nothing.
    expect((await deliver({ ...both, id: id("evt") })).body).toMatchObject({ outcome: "skipped" });
    expect(await refundsOfSale(saleId)).toHaveLength(3);
  });

  it("a kept event listing several refunds applies each under its id once the sale is recorded", async () => {
    const p = await connectedProgram({ commissionRate: "20" });
    const clickId = await click(p);
    const session = checkoutSession({ amount: 10_000, metadata: { service_click_id: clickId } });
    const paymentIntent = String(session.payment_intent);
    const early = await deliver(listing(p, paymentIntent, 3_000, ["re_2", "re_1"], [1_000, 2_000]));
    expect(early.body).toMatchObject({ outcome: "deferred" });
    const recorded = await deliver(event("checkout.session.completed", session, { account: p.accountId }));
    const saleId = Number(recorded.body.sale_id);
    expect((await refundsOfSale(saleId)).map((r) => [r.idempotencyKey, r.amountCents])).toEqual([
      ["id:re_1", 2_000],
      ["id:re_2", 1_000],
    ]);
  });
});

describe("charge.dispute.created", () => {
  it("is a chargeback: the commission is reversed whole, keyed by the dispute id", async () => {
    const p = await connectedProgram({ commissionRate: "20" });
    const { paymentIntent, saleId } = await paidCheckout(p);
    await deliver(refunded(p, paymentIntent, 2_500, ["re_part"]));
    const d = dispute({ paymentIntent, amount: 7_500 });
    const response = await deliver(event("charge.dispute.created", d, { account: p.accountId }));
    expect(response.body).toMatchObject({ outcome: "reversed" });
    expect(await commissionOfSale(saleId)).toMatchObject({ status: "reversed", deductedCents: 2_000 });
    expect(await balanceOf(p.programId, p.partnerIds[0])).toBe(0);
    const rows = await refundsOfSale(saleId);
    expect(rows.at(-1)).toMatchObject({ refundId: d.id, reason: "chargeback", amountCents: 7_500 });

    const replay = await deliver(event("charge.dispute.created", d, { account: p.accountId }));
    expect(replay.body).toMatchObject({ outcome: "skipped" });
    expect(await refundsOfSale(saleId)).toHaveLength(2);
  });
});

describe("out of order: a reversal before its sale", () => {
  it("keeps the refund (200 deferred) and applies it when the payment event records the sale", async () => {
    const p = await connectedProgram({ commissionRate: "20" });
    const clickId = await click(p);
    const session = checkoutSession({ amount: 10_000, metadata: { service_click_id: clickId } });
    const paymentIntent = String(session.payment_intent);

    const early = await deliver(refunded(p, paymentIntent, 4_000, ["re_early"]));
    expect(early).toEqual({ status: 200, body: { received: true, outcome: "deferred" } });
    expect(await pendingOf(p.programId)).toMatchObject([
      { paymentId: paymentIntent, kind: "refund", reversalId: "re_early", appliedAt: null },
    ]);

    const recorded = await deliver(event("checkout.session.completed", session, { account: p.accountId }));
    expect(recorded.body).toMatchObject({ outcome: "recorded" });
    const saleId = Number(recorded.body.sale_id);
    expect(await commissionOfSale(saleId)).toMatchObject({ status: "refunded", deductedCents: 800 });
    expect(await balanceOf(p.programId, p.partnerIds[0])).toBe(1_200);
    expect((await pendingOf(p.programId))[0]?.appliedAt).not.toBeNull();

    // The refund event delivered again later changes nothing.
    expect((await deliver(refunded(p, paymentIntent, 4_000, ["re_early"]))).body).toMatchObject({
      outcome: "skipped",
    });
    expect(await refundsOfSale(saleId)).toHaveLength(1);
  });

  it("a test-mode refund kept before its sale never reaches the live sale recorded under the same payment id", async () => {
    const p = await connectedProgram({ commissionRate: "20" });
    const clickId = await click(p);
    const session = checkoutSession({ amount: 10_000, metadata: { service_click_id: clickId } });
    const paymentIntent = String(session.payment_intent);
    const testRefund = event(
      "charge.refunded",
      charge({
        paymentIntent,
        amount: 10_000,
        amountRefunded: 10_000,
        refundIds: ["re_test"],
        livemode: false,
      }),
      { account: p.accountId, livemode: false },
    );
    expect((await deliver(testRefund)).body).toMatchObject({ outcome: "deferred" });
    expect(await pendingOf(p.programId)).toMatchObject([
      { reversalId: "re_test", namespace: `test:${p.programId}`, appliedAt: null },
    ]);

    const recorded = await deliver(event("checkout.session.completed", session, { account: p.accountId }));
    expect(recorded.body).toMatchObject({ outcome: "recorded" });
    const saleId = Number(recorded.body.sale_id);
    expect(await commissionOfSale(saleId)).toMatchObject({ status: "approved", deductedCents: 0 });
    expect(await balanceOf(p.programId, p.partnerIds[0])).toBe(2_000);
    expect(await refundsOfSale(saleId)).toHaveLength(0);

    // The same live payment delivered again (a duplicate) applies it no more than its first delivery did.
    const again = await deliver(event("checkout.session.completed", session, { account: p.accountId }));
    expect(again.body).toMatchObject({ outcome: "duplicate" });
    expect(await commissionOfSale(saleId)).toMatchObject({ status: "approved", deductedCents: 0 });
    expect((await pendingOf(p.programId))[0]?.appliedAt).toBeNull();
  });

  it("a test-mode refund kept before its sale is applied to the test sale recorded under that id", async () => {
    const p = await connectedProgram({ commissionRate: "20" });
    const clickId = await click(p);
    const session = checkoutSession({
      amount: 10_000,
      metadata: { service_click_id: clickId },
      livemode: false,
    });
    const paymentIntent = String(session.payment_intent);
    const testRefund = event(
      "charge.refunded",
      charge({ paymentIntent, amount: 10_000, amountRefunded: 3_000, refundIds: ["re_tt"], livemode: false }),
      { account: p.accountId, livemode: false },
    );
    expect((await deliver(testRefund)).body).toMatchObject({ outcome: "deferred" });
    const recorded = await deliver(
      event("checkout.session.completed", session, { account: p.accountId, livemode: false }),
    );
    expect(recorded.body).toMatchObject({ outcome: "test_recorded" });
    expect(await refundsOfSale(Number(recorded.body.sale_id))).toMatchObject([{ amountCents: 3_000 }]);
    expect((await pendingOf(p.programId))[0]?.appliedAt).not.toBeNull();
  });

  it("a test-mode refund of a live sale's payment id changes nothing of the live sale", async () => {
    const p = await connectedProgram({ commissionRate: "20" });
    const { paymentIntent, saleId } = await paidCheckout(p);
    const testRefund = event(
      "charge.refunded",
      charge({
        paymentIntent,
        amount: 10_000,
        amountRefunded: 10_000,
        refundIds: ["re_t2"],
        livemode: false,
      }),
      { account: p.accountId, livemode: false },
    );
    expect((await deliver(testRefund)).body).toMatchObject({ outcome: "deferred" });
    expect(await commissionOfSale(saleId)).toMatchObject({ status: "approved", deductedCents: 0 });
    expect(await balanceOf(p.programId, p.partnerIds[0])).toBe(2_000);
  });

  it("keeps a dispute of a renewal not recorded yet, then reverses it", async () => {
    const p = await connectedProgram({ commissionType: "recurring_percent", commissionRate: "10" });
    const clickId = await click(p);
    const inv = invoice({ legacy: true, amount: 5_000, metadata: { service_click_id: clickId } });
    const paymentIntent = String(inv.payment_intent);
    const early = await deliver(
      event("charge.dispute.created", dispute({ paymentIntent, amount: 5_000 }), { account: p.accountId }),
    );
    expect(early.body).toMatchObject({ outcome: "deferred" });
    const recorded = await deliver(event("invoice.payment_succeeded", inv, { account: p.accountId }));
    expect(await commissionOfSale(Number(recorded.body.sale_id))).toMatchObject({ status: "reversed" });
  });
});
