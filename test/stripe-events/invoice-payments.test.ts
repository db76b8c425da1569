import { eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { repairMissingCommissions } from "../../lib/commissions/repair-missing-commissions.ts";
import { decideInvoicePayment } from "../../lib/stripe/payment-aliases.ts";
import { commissions } from "../../schema/index.ts";
import { balanceOf, commissionsOf } from "../workers/sale-harness.ts";
import {
  aliasesOfProgram,
  api,
  type ConnectedProgram,
  charge,
  click,
  connectedProgram,
  db,
  deliver,
  dispute,
  event,
  id,
  invoice,
  invoicePayment,
  pendingOf,
  refundsOfSale,
  saleCall,
  salesOf,
} from "./stripe-harness.ts";

async function commissionOfSale(saleId: number) {
  const [row] = await db.select().from(commissions).where(eq(commissions.saleId, saleId));
  return row;
}

/** A program paying 10% on every payment, and a click of its partner A. */
async function recurringProgram(): Promise<{ p: ConnectedProgram; clickId: string }> {
  const p = await connectedProgram({ commissionType: "recurring_percent", commissionRate: "10" });
  return { p, clickId: await click(p) };
}

/** A current-shape invoice of 100.00 (no PaymentIntent in the payload) attributed by its metadata. */
function currentInvoice(clickId: string, extra: Parameters<typeof invoice>[0] = {}) {
  return invoice({ amount: 10_000, metadata: { service_click_id: clickId }, ...extra });
}

const paid = (p: ConnectedProgram, invoiceId: string, paymentIntent: string) =>
  event("invoice_payment.paid", invoicePayment({ invoiceId, paymentIntent, amount: 10_000 }), {
    account: p.accountId,
  });

const refunded = (p: ConnectedProgram, paymentIntent: string, amountRefunded: number) =>
  event("charge.refunded", charge({ paymentIntent, amount: 10_000, amountRefunded }), {
    account: p.accountId,
  });

describe("invoice_payment.paid: the PaymentIntent of an invoice keyed by its invoice id", () => {
  it("invoice, then invoice_payment.paid, then charge.refunded: the refund reduces the commission", async () => {
    const { p, clickId } = await recurringProgram();
    const inv = currentInvoice(clickId);
    const recorded = await deliver(event("invoice.paid", inv, { account: p.accountId }));
    expect(recorded.body).toMatchObject({ outcome: "recorded" });
    const saleId = Number(recorded.body.sale_id);
    expect((await salesOf(p.programId))[0]).toMatchObject({ processorEventId: inv.id });

    const paymentIntent = id("pi");
    const linked = await deliver(paid(p, String(inv.id), paymentIntent));
    expect(linked.body).toMatchObject({ outcome: "linked", sale_id: saleId, recorded_by: "events" });
    expect(await aliasesOfProgram(p.programId)).toMatchObject([
      { alias: paymentIntent, paymentId: inv.id, saleId },
    ]);

    const refund = await deliver(refunded(p, paymentIntent, 4_000));
    expect(refund.body).toMatchObject({ outcome: "refunded" });
    expect(await commissionOfSale(saleId)).toMatchObject({ status: "refunded", deductedCents: 400 });
    expect(await balanceOf(p.programId, p.partnerIds[0])).toBe(600);

    // A dispute naming the PaymentIntent reverses what is left.
    const disputed = await deliver(
      event("charge.dispute.created", dispute({ paymentIntent, amount: 6_000 }), { account: p.accountId }),
    );
    expect(disputed.body).toMatchObject({ outcome: "reversed" });
    expect(await balanceOf(p.programId, p.partnerIds[0])).toBe(0);

    // The same invoice_payment.paid again (another delivery) links nothing new.
    const again = await deliver(paid(p, String(inv.id), paymentIntent));
    expect(again.body).toMatchObject({ outcome: "already_linked", sale_id: saleId });
    expect(await aliasesOfProgram(p.programId)).toHaveLength(1);
  });

  it("charge.refunded before invoice_payment.paid: kept, then applied when the alias arrives", async () => {
    const { p, clickId } = await recurringProgram();
    const inv = currentInvoice(clickId);
    const recorded = await deliver(event("invoice.paid", inv, { account: p.accountId }));
    const saleId = Number(recorded.body.sale_id);
    const paymentIntent = id("pi");

    const early = await deliver(refunded(p, paymentIntent, 10_000));
    expect(early.body).toEqual({ received: true, outcome: "deferred" });
    expect(await commissionOfSale(saleId)).toMatchObject({ status: "approved", deductedCents: 0 });

    const linked = await deliver(paid(p, String(inv.id), paymentIntent));
    expect(linked.body).toMatchObject({ outcome: "linked", sale_id: saleId });
    expect(await commissionOfSale(saleId)).toMatchObject({ status: "reversed", deductedCents: 1_000 });
    expect(await balanceOf(p.programId, p.partnerIds[0])).toBe(0);
    expect((await pendingOf(p.programId))[0]?.appliedAt).not.toBeNull();
  });

  it("dispute, then invoice_payment.paid, then the invoice: everything meets when the invoice is recorded", async () => {
    const { p, clickId } = await recurringProgram();
    const inv = currentInvoice(clickId);
    const paymentIntent = id("pi");
    const early = await deliver(
      event("charge.dispute.created", dispute({ paymentIntent, amount: 10_000 }), { account: p.accountId }),
    );
    expect(early.body).toMatchObject({ outcome: "deferred" });
    const kept = await deliver(paid(p, String(inv.id), paymentIntent));
    expect(kept.body).toEqual({ received: true, outcome: "alias_kept" });
    expect(await aliasesOfProgram(p.programId)).toMatchObject([
      { alias: paymentIntent, paymentId: inv.id, saleId: null },
    ]);

    const recorded = await deliver(event("invoice.payment_succeeded", inv, { account: p.accountId }));
    expect(recorded.body).toMatchObject({ outcome: "recorded" });
    const saleId = Number(recorded.body.sale_id);
    expect(await aliasesOfProgram(p.programId)).toMatchObject([{ alias: paymentIntent, saleId }]);
    expect(await commissionOfSale(saleId)).toMatchObject({ status: "reversed" });
    expect((await refundsOfSale(saleId)).map((r) => r.reason)).toEqual(["chargeback"]);
  });

  it("ignores an invoice payment that is not paid", async () => {
    const p = await connectedProgram();
    const response = await deliver(
      event(
        "invoice_payment.paid",
        invoicePayment({ invoiceId: id("in"), paymentIntent: id("pi"), status: "open" }),
        { account: p.accountId },
      ),
    );
    expect(response.body).toMatchObject({ outcome: "skipped", reason: "invoice payment status open" });
    expect(await aliasesOfProgram(p.programId)).toHaveLength(0);
  });
});

describe("an invoice carrying `payments`", () => {
  it("is keyed by the paid entry's PaymentIntent; its invoice id becomes an alias", async () => {
    const { p, clickId } = await recurringProgram();
    const paidIntent = id("pi");
    const inv = currentInvoice(clickId, {
      payments: [
        { paymentIntent: id("pi"), status: "canceled" },
        { paymentIntent: id("pi"), status: "open" },
        { paymentIntent: paidIntent, status: "paid" },
      ],
    });
    const recorded = await deliver(event("invoice.paid", inv, { account: p.accountId }));
    const saleId = Number(recorded.body.sale_id);
    expect((await salesOf(p.programId))[0]).toMatchObject({ processorEventId: paidIntent });
    expect(await aliasesOfProgram(p.programId)).toMatchObject([
      { alias: inv.id, paymentId: paidIntent, saleId },
    ]);

    // The sale endpoint refuses both ids; invoice_payment.paid finds both on one sale.
    for (const transactionId of [paidIntent, String(inv.id)]) {
      const api = await saleCall(p, {
        transaction_id: transactionId,
        amount_cents: 10_000,
        click_id: clickId,
      });
      expect(api.status).toBe(409);
      expect(api.body).toMatchObject({ error: { details: { sale_id: saleId } } });
    }
    const linked = await deliver(paid(p, String(inv.id), paidIntent));
    expect(linked.body).toMatchObject({ outcome: "already_linked", sale_id: saleId });
    expect(await salesOf(p.programId)).toHaveLength(1);
  });

  it("a legacy invoice (payment_intent) also records its invoice id as an alias", async () => {
    const { p, clickId } = await recurringProgram();
    const inv = invoice({ legacy: true, metadata: { service_click_id: clickId } });
    const recorded = await deliver(event("invoice.paid", inv, { account: p.accountId }));
    expect(await aliasesOfProgram(p.programId)).toMatchObject([
      { alias: inv.id, paymentId: inv.payment_intent, saleId: Number(recorded.body.sale_id) },
    ]);
  });
});

describe("the sale endpoint and an invoice sale of the events (one payment, two ids)", () => {
  it("the invoice and its alias first, then the sale endpoint with the PaymentIntent: 409 with the invoice sale", async () => {
    const { p, clickId } = await recurringProgram();
    const inv = currentInvoice(clickId);
    const recorded = await deliver(event("invoice.paid", inv, { account: p.accountId }));
    const paymentIntent = id("pi");
    await deliver(paid(p, String(inv.id), paymentIntent));

    const api = await saleCall(p, { transaction_id: paymentIntent, amount_cents: 10_000, click_id: clickId });
    expect(api.status).toBe(409);
    expect(api.body).toMatchObject({
      error: {
        code: "duplicate_transaction",
        message: "Duplicate transaction_id. This sale has already been recorded.",
        details: { sale_id: recorded.body.sale_id },
      },
    });
    expect(await salesOf(p.programId)).toHaveLength(1);
    expect(await commissionsOf(p.programId)).toHaveLength(1);
  });

  it("the sale endpoint first, then invoice_payment.paid, then the invoice: recorded once", async () => {
    const { p, clickId } = await recurringProgram();
    const inv = currentInvoice(clickId);
    const paymentIntent = id("pi");
    const api = await saleCall(p, { transaction_id: paymentIntent, amount_cents: 10_000, click_id: clickId });
    expect(api.status).toBe(200);

    const linked = await deliver(paid(p, String(inv.id), paymentIntent));
    expect(linked.body).toMatchObject({
      outcome: "linked",
      sale_id: api.body.sale_id,
      recorded_by: "sale endpoint",
    });
    const duplicate = await deliver(event("invoice.paid", inv, { account: p.accountId }));
    expect(duplicate.body).toMatchObject({
      outcome: "duplicate",
      sale_id: api.body.sale_id,
      recorded_by: "sale endpoint",
    });
    expect(await salesOf(p.programId)).toHaveLength(1);
    expect(await commissionsOf(p.programId)).toHaveLength(1);
    expect(await balanceOf(p.programId, p.partnerIds[0])).toBe(1_000);
  });

  it("the sale endpoint first, then the invoice, then invoice_payment.paid: the events' duplicate is reversed", async () => {
    const { p, clickId } = await recurringProgram();
    const inv = currentInvoice(clickId);
    const paymentIntent = id("pi");
    const api = await saleCall(p, { transaction_id: paymentIntent, amount_cents: 10_000, click_id: clickId });
    // Nothing in the invoice names the PaymentIntent yet: it is recorded.
    const recorded = await deliver(event("invoice.paid", inv, { account: p.accountId }));
    expect(recorded.body).toMatchObject({ outcome: "recorded" });
    expect(await balanceOf(p.programId, p.partnerIds[0])).toBe(2_000);

    const linked = await deliver(paid(p, String(inv.id), paymentIntent));
    expect(linked.body).toMatchObject({
      outcome: "duplicate_reversed",
      sale_id: recorded.body.sale_id,
      duplicate_of: api.body.sale_id,
      result: "reversed",
    });
    // The partner is paid once: the sale endpoint's commission stands, the events' one is reversed.
    expect(await balanceOf(p.programId, p.partnerIds[0])).toBe(1_000);
    expect(await commissionOfSale(Number(api.body.sale_id))).toMatchObject({ status: "approved" });
    expect(await commissionOfSale(Number(recorded.body.sale_id))).toMatchObject({
      status: "reversed",
      refundReason: `duplicate of sale ${api.body.sale_id} (the same payment)`,
    });
    // A provider refund of that payment does not touch the sale endpoint's sale (spec: not linked).
    expect((await deliver(refunded(p, paymentIntent, 10_000))).body).toMatchObject({ outcome: "not_linked" });
  });

  it("the invoice, then the sale endpoint, then invoice_payment.paid, under a one-time commission: the partner is still paid once", async () => {
    const p = await connectedProgram({ commissionType: "percent", commissionRate: "10" });
    const clickId = await click(p);
    const inv = currentInvoice(clickId);
    const paymentIntent = id("pi");
    const recorded = await deliver(event("invoice.paid", inv, { account: p.accountId }));
    expect(recorded.body).toMatchObject({ outcome: "recorded" });
    // The same payment by the sale endpoint: the customer's one-time commission is the invoice's already.
    const api = await saleCall(p, { transaction_id: paymentIntent, amount_cents: 10_000, click_id: clickId });
    expect(api.body).toMatchObject({ commission_id: null });
    expect(await balanceOf(p.programId, p.partnerIds[0])).toBe(1_000);

    const linked = await deliver(paid(p, String(inv.id), paymentIntent));
    expect(linked.body).toMatchObject({ outcome: "duplicate_reversed", duplicate_of: api.body.sale_id });
    // The events' commission is reversed as the duplicate's; the sale endpoint's sale, which had none only
    // because of it, gets its commission from the scheduled repair: paid once, not never.
    await repairMissingCommissions(db, new Date());
    expect(await commissionOfSale(Number(api.body.sale_id))).toMatchObject({
      status: "approved",
      amountCents: 1_000,
    });
    expect(await balanceOf(p.programId, p.partnerIds[0])).toBe(1_000);

    // Delivered again: nothing more.
    expect((await deliver(paid(p, String(inv.id), paymentIntent))).status).toBe(200);
    await repairMissingCommissions(db, new Date());
    expect(await commissionsOf(p.programId)).toHaveLength(2);
    expect(await balanceOf(p.programId, p.partnerIds[0])).toBe(1_000);
  });

  it("under a one-time commission, a payment partly refunded through the invoice's sale before the link is not paid in full again", async () => {
    const p = await connectedProgram({ commissionType: "percent", commissionRate: "10" });
    const clickId = await click(p);
    const inv = currentInvoice(clickId);
    const paymentIntent = id("pi");
    expect((await deliver(event("invoice.paid", inv, { account: p.accountId }))).body).toMatchObject({
      outcome: "recorded",
    });
    // Half of it refunded by the invoice id (the refund endpoint finds an invoice sale by it): 500 of 1,000 left.
    const refund = await api(
      "/api/v1/track/refund",
      { transaction_id: String(inv.id), refund_amount_cents: 5_000, refund_id: id("re") },
      { Authorization: `Bearer ${p.apiKey}` },
    );
    expect(refund.body).toMatchObject({ status: "refunded" });
    expect(await balanceOf(p.programId, p.partnerIds[0])).toBe(500);
    const sale = await saleCall(p, {
      transaction_id: paymentIntent,
      amount_cents: 10_000,
      click_id: clickId,
    });
    expect(sale.body).toMatchObject({ commission_id: null });

    expect((await deliver(paid(p, String(inv.id), paymentIntent))).body).toMatchObject({
      outcome: "duplicate_reversed",
    });
    await repairMissingCommissions(db, new Date());
    // The repair would pay the whole 1,000 for a half-refunded payment: the kept sale is left without one.
    expect(await commissionOfSale(Number(sale.body.sale_id))).toBeUndefined();
    expect(await balanceOf(p.programId, p.partnerIds[0])).toBe(0);
  });

  it("the sale endpoint first under a one-time commission, then the invoice and invoice_payment.paid: paid once", async () => {
    const p = await connectedProgram({ commissionType: "percent", commissionRate: "10" });
    const clickId = await click(p);
    const inv = currentInvoice(clickId);
    const paymentIntent = id("pi");
    const api = await saleCall(p, { transaction_id: paymentIntent, amount_cents: 10_000, click_id: clickId });
    expect((await deliver(event("invoice.paid", inv, { account: p.accountId }))).body).toMatchObject({
      outcome: "recorded",
      commission_id: null,
    });
    expect((await deliver(paid(p, String(inv.id), paymentIntent))).body).toMatchObject({
      outcome: "duplicate_reversed",
    });
    await repairMissingCommissions(db, new Date());
    expect(await commissionsOf(p.programId)).toHaveLength(1);
    expect(await commissionOfSale(Number(api.body.sale_id))).toMatchObject({ status: "approved" });
    expect(await balanceOf(p.programId, p.partnerIds[0])).toBe(1_000);
  });
});

describe("decideInvoicePayment (pure)", () => {
  const payment = { invoiceId: "in_1", paymentIds: ["pi_1"], livemode: true };
  const events = (id: number) => ({ id, source: "stripe" });
  const api = (id: number) => ({ id, source: "api" });
  it.each([
    ["nothing recorded", null, null, { action: "keep" }],
    [
      "the invoice recorded",
      events(1),
      null,
      { action: "link", sale: events(1), paymentId: "in_1", aliases: ["pi_1"] },
    ],
    [
      "the PaymentIntent recorded by the sale endpoint",
      null,
      api(2),
      { action: "link", sale: api(2), paymentId: "pi_1", aliases: ["in_1"] },
    ],
    ["both on one sale", events(1), events(1), { action: "already_linked", sale: events(1) }],
    [
      "events' invoice, endpoint's payment",
      events(3),
      api(2),
      { action: "duplicate", keep: api(2), reverse: events(3) },
    ],
    [
      "endpoint's invoice, events' payment",
      api(2),
      events(3),
      { action: "duplicate", keep: api(2), reverse: events(3) },
    ],
    [
      "two events' sales: the later goes",
      events(5),
      events(4),
      { action: "duplicate", keep: events(4), reverse: events(5) },
    ],
    [
      "two sale endpoint sales: none touched",
      api(1),
      api(2),
      { action: "duplicate", keep: api(1), reverse: null },
    ],
  ])("%s", (_name, invoiceSale, paymentSale, expected) => {
    expect(decideInvoicePayment(payment, { invoiceSale, paymentSale })).toEqual(expected);
  });
});
