import { describe, expect, it } from "vitest";
import { balanceOf, commissionsOf } from "../workers/sale-harness.ts";
import {
  aliasesOfProgram,
  charge,
  checkoutSession,
  click,
  connectedProgram,
  customersOf,
  type Delivery,
  deliver,
  event,
  eventRow,
  id,
  invoice,
  invoicePayment,
  keptPaymentsOf,
  pendingOf,
  type StripeEventPayload,
  saleCall,
  salesOf,
} from "./stripe-harness.ts";

/** Delivers every event `copies` times at once, then once more each, as the provider retries its 409s. */
async function deliverAtOnce(events: StripeEventPayload[], copies: number): Promise<Delivery[]> {
  const all = events.flatMap((e) => Array.from({ length: copies }, () => e));
  const responses = await Promise.all(all.map((e) => deliver(e)));
  for (const r of responses) expect([200, 409]).toContain(r.status);
  for (const e of events) {
    const retried = await deliver(e);
    expect(retried.status).toBe(200);
  }
  return responses;
}

// Needs a real multi-connection PostgreSQL (PGlite is one session): runs when DATABASE_URL is set.
describe("concurrent deliveries (PostgreSQL)", () => {
  it("the same event delivered 10 times at once: one sale, one commission, one credit", async () => {
    const p = await connectedProgram({ commissionRate: "20" });
    const clickId = await click(p);
    const e = event(
      "checkout.session.completed",
      checkoutSession({ amount: 10_000, metadata: { service_click_id: clickId } }),
      { account: p.accountId },
    );
    const responses = await Promise.all(Array.from({ length: 10 }, () => deliver(e)));
    // One delivery records it; the others found it claimed (409, the provider retries them) or completed.
    expect(responses.filter((r) => r.body.outcome === "recorded")).toHaveLength(1);
    for (const r of responses) {
      expect([200, 409]).toContain(r.status);
      if (r.status === 200) expect(["recorded", "already_processed"]).toContain(r.body.outcome);
    }
    expect(await salesOf(p.programId)).toHaveLength(1);
    expect(await commissionsOf(p.programId)).toHaveLength(1);
    expect(await customersOf(p.programId)).toHaveLength(1);
    expect(await balanceOf(p.programId, p.partnerIds[0])).toBe(2_000);
    expect(await eventRow(e.id)).toMatchObject({ status: "completed" });

    // The provider's retries of the 409s then find it completed.
    expect((await deliver(e)).body).toEqual({ received: true, outcome: "already_processed" });
  });

  it("the two invoice events of one payment, 5 deliveries each, at once: one sale", async () => {
    const p = await connectedProgram({ commissionType: "recurring_percent", commissionRate: "10" });
    const clickId = await click(p);
    const inv = invoice({ legacy: true, amount: 5_000, metadata: { service_click_id: clickId } });
    const paid = event("invoice.paid", inv, { account: p.accountId });
    const succeeded = event("invoice.payment_succeeded", inv, { account: p.accountId });
    const responses = await Promise.all(
      Array.from({ length: 10 }, (_, i) => deliver(i % 2 === 0 ? paid : succeeded)),
    );
    expect(responses.filter((r) => r.body.outcome === "recorded")).toHaveLength(1);
    expect(responses.every((r) => r.status === 200 || r.status === 409)).toBe(true);
    expect(await salesOf(p.programId)).toHaveLength(1);
    expect(await commissionsOf(p.programId)).toHaveLength(1);
    expect(await balanceOf(p.programId, p.partnerIds[0])).toBe(500);
  });
});

describe("concurrent deliveries of one subscription payment's events (PostgreSQL)", () => {
  it("invoice, invoice_payment.paid and charge.refunded at once, 3 deliveries each: one sale, linked, refunded once", async () => {
    const p = await connectedProgram({ commissionType: "recurring_percent", commissionRate: "10" });
    const clickId = await click(p);
    const inv = invoice({ amount: 10_000, metadata: { service_click_id: clickId } });
    const paymentIntent = id("pi");
    const events = [
      event("invoice.paid", inv, { account: p.accountId }),
      event(
        "invoice_payment.paid",
        invoicePayment({ invoiceId: String(inv.id), paymentIntent, amount: 10_000 }),
        { account: p.accountId },
      ),
      event("charge.refunded", charge({ paymentIntent, amount: 10_000, amountRefunded: 4_000 }), {
        account: p.accountId,
      }),
    ];
    await deliverAtOnce(events, 3);

    const sales = await salesOf(p.programId);
    expect(sales).toHaveLength(1);
    expect(sales[0]).toMatchObject({ processorEventId: inv.id, refundedCents: 4_000 });
    expect(await aliasesOfProgram(p.programId)).toMatchObject([
      { alias: paymentIntent, saleId: sales[0]!.id },
    ]);
    expect(await commissionsOf(p.programId)).toMatchObject([{ status: "refunded", deductedCents: 400 }]);
    expect(await balanceOf(p.programId, p.partnerIds[0])).toBe(600);
    for (const kept of await pendingOf(p.programId)) expect(kept.appliedAt).not.toBeNull();
  });

  it("a subscription's first invoice and its checkout at once, 3 deliveries each: recorded once", async () => {
    const p = await connectedProgram({ commissionType: "recurring_percent", commissionRate: "10" });
    const clickId = await click(p);
    const customer = id("cus");
    const subscription = id("sub");
    const inv = invoice({ subscription, customer, amount: 5_000 });
    const session = {
      ...checkoutSession({ mode: "subscription", clientReferenceId: clickId, customer }),
      subscription,
    };
    const events = [
      event("invoice.paid", inv, { account: p.accountId }),
      event("checkout.session.completed", session, { account: p.accountId }),
    ];
    await deliverAtOnce(events, 3);

    expect(await salesOf(p.programId)).toMatchObject([
      { processorEventId: inv.id, partnerId: p.partnerIds[0] },
    ]);
    expect(await commissionsOf(p.programId)).toHaveLength(1);
    expect(await customersOf(p.programId)).toMatchObject([{ clickId, providerCustomerId: customer }]);
    for (const kept of await keptPaymentsOf(p.programId)) expect(kept.appliedAt).not.toBeNull();
  });
});

describe("one payment on both paths at once (PostgreSQL)", () => {
  it("checkout.session.completed and 5 sale calls with the session id at once: one sale, one commission", async () => {
    const p = await connectedProgram({ commissionRate: "20" });
    const clickId = await click(p);
    const session = checkoutSession({ amount: 10_000, metadata: { service_click_id: clickId } });
    const e = event("checkout.session.completed", session, { account: p.accountId });
    const [delivered, ...calls] = await Promise.all([
      deliver(e),
      ...Array.from({ length: 5 }, () =>
        saleCall(p, { transaction_id: session.id, amount_cents: 10_000, click_id: clickId }),
      ),
    ]);
    expect(await salesOf(p.programId)).toHaveLength(1);
    expect(await commissionsOf(p.programId)).toHaveLength(1);
    expect(await balanceOf(p.programId, p.partnerIds[0])).toBe(2_000);
    const [sale] = await salesOf(p.programId);
    // Whichever path won, every other answer names the one sale.
    const recordedByCall = calls.filter((r) => r.status === 200);
    expect(recordedByCall.length + (delivered?.body.outcome === "recorded" ? 1 : 0)).toBe(1);
    for (const r of calls.filter((c) => c.status !== 200)) {
      expect(r.status).toBe(409);
      expect(r.body).toMatchObject({
        error: { code: "duplicate_transaction", details: { sale_id: sale?.id } },
      });
    }
    if (delivered?.body.outcome !== "recorded") {
      expect(delivered?.body).toMatchObject({ outcome: "duplicate", sale_id: sale?.id });
    }
  });
});
