import { describe, expect, it } from "vitest";
import { commissionsOf } from "../workers/sale-harness.ts";
import {
  api,
  type ConnectedProgram,
  charge,
  checkoutSession,
  click,
  connectedProgram,
  deliver,
  event,
  refundsOfSale,
  saleCall,
  salesOf,
} from "./stripe-harness.ts";

/**
 * Issue 9 section 2 (spec section 6): a payment is known by its Checkout Session id and its PaymentIntent id
 * on both paths, and recorded once in either order.
 */
function refundCall(p: ConnectedProgram, body: Record<string, unknown>) {
  return api("/api/v1/track/refund", body, { Authorization: `Bearer ${p.apiKey}` });
}

async function paidCheckout(p: ConnectedProgram) {
  const session = checkoutSession({
    amount: 10_000,
    metadata: { service_click_id: await click(p), program_id: String(p.programId) },
  });
  const delivered = await deliver(event("checkout.session.completed", session, { account: p.accountId }));
  expect(delivered.body).toMatchObject({ outcome: "recorded" });
  return {
    sessionId: session.id as string,
    paymentIntent: session.payment_intent as string,
    saleId: delivered.body.sale_id as number,
  };
}

function refunded(p: ConnectedProgram, paymentIntent: string, amountRefunded: number, refundIds: string[]) {
  return event("charge.refunded", charge({ paymentIntent, amount: 10_000, amountRefunded, refundIds }), {
    account: p.accountId,
  });
}

describe("the Checkout Session id, on both paths", () => {
  it("event first: a sale call with the session id answers 409 with the recorded sale's id", async () => {
    const p = await connectedProgram({ commissionRate: "20" });
    const { sessionId, paymentIntent, saleId } = await paidCheckout(p);
    for (const transactionId of [sessionId, paymentIntent]) {
      const again = await saleCall(p, {
        transaction_id: transactionId,
        amount_cents: 10_000,
        click_id: await click(p),
      });
      expect(again.status).toBe(409);
      expect(again.body).toEqual({
        data: null,
        error: {
          status: 409,
          name: "ConflictError",
          message: "Duplicate transaction_id. This sale has already been recorded.",
          code: "duplicate_transaction",
          details: { sale_id: saleId },
        },
      });
    }
    expect(await salesOf(p.programId)).toHaveLength(1);
  });

  it("the refund endpoint finds the sale by the session id and by the PaymentIntent id", async () => {
    const p = await connectedProgram({ commissionRate: "20" });
    const { sessionId, paymentIntent, saleId } = await paidCheckout(p);
    const [commission] = await commissionsOf(p.programId);
    const bySession = await refundCall(p, {
      transaction_id: sessionId,
      refund_amount_cents: 2_500,
      refund_id: "r1",
    });
    expect(bySession.body).toEqual({
      success: true,
      status: "refunded",
      deductionAmount: 500,
      commission_id: commission!.id,
    });
    const byIntent = await refundCall(p, {
      transaction_id: paymentIntent,
      refund_amount_cents: 2_500,
      refund_id: "r2",
    });
    expect(byIntent.body).toMatchObject({ status: "refunded", deductionAmount: 500 });
    expect((await refundsOfSale(saleId)).map((r) => r.refundId)).toEqual(["r1", "r2"]);
  });

  it("sale call first with the session id: the event records nothing more", async () => {
    const p = await connectedProgram({ commissionRate: "20" });
    const clickId = await click(p);
    const session = checkoutSession({
      amount: 10_000,
      metadata: { service_click_id: clickId, program_id: String(p.programId) },
    });
    const called = await saleCall(p, { transaction_id: session.id, amount_cents: 10_000, click_id: clickId });
    expect(called.status).toBe(200);
    const delivered = await deliver(event("checkout.session.completed", session, { account: p.accountId }));
    expect(delivered.status).toBe(200);
    expect(delivered.body).toMatchObject({
      outcome: "duplicate",
      sale_id: called.body.sale_id,
      recorded_by: "sale endpoint",
    });
    expect(await salesOf(p.programId)).toHaveLength(1);
    expect(await commissionsOf(p.programId)).toHaveLength(1);
  });
});

/** Issue 9 defect 3: a provider refund and the brand's refund call naming the provider's refund id. */
describe("the provider's refund id on both paths", () => {
  it("provider refund first, then the refund call with refund_id re_...: counted once", async () => {
    const p = await connectedProgram({ commissionRate: "20" });
    const { sessionId, paymentIntent, saleId } = await paidCheckout(p);
    expect((await deliver(refunded(p, paymentIntent, 3_000, ["re_one"]))).body).toMatchObject({
      outcome: "refunded",
    });
    const call = await refundCall(p, {
      transaction_id: sessionId,
      refund_amount_cents: 3_000,
      refund_id: "re_one",
    });
    expect(call.body).toMatchObject({
      success: true,
      status: "skipped",
      reason: "refund_id already applied",
    });
    expect((await salesOf(p.programId))[0]?.refundedCents).toBe(3_000);
    expect(await refundsOfSale(saleId)).toHaveLength(1);
  });

  it("refund call first with refund_id re_..., then the provider's refund: counted once", async () => {
    const p = await connectedProgram({ commissionRate: "20" });
    const { sessionId, paymentIntent, saleId } = await paidCheckout(p);
    const call = await refundCall(p, {
      transaction_id: sessionId,
      refund_amount_cents: 3_000,
      refund_id: "re_two",
    });
    expect(call.body).toMatchObject({ success: true, status: "refunded", deductionAmount: 600 });
    const delivered = await deliver(refunded(p, paymentIntent, 3_000, ["re_two"]));
    expect(delivered.body).toMatchObject({ outcome: "skipped" });
    expect((await salesOf(p.programId))[0]?.refundedCents).toBe(3_000);
    expect(await refundsOfSale(saleId)).toHaveLength(1);
    // A later refund at the provider is still applied, once.
    expect((await deliver(refunded(p, paymentIntent, 5_000, ["re_three", "re_two"]))).body).toMatchObject({
      outcome: "refunded",
    });
    expect((await salesOf(p.programId))[0]?.refundedCents).toBe(5_000);
  });
});
