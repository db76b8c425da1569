import { describe, expect, it } from "vitest";
import { commissionsOf } from "../workers/sale-harness.ts";
import {
  checkoutSession,
  click,
  connectedProgram,
  customersOf,
  deliver,
  event,
  id,
  invoice,
  keptPaymentsOf,
  lead,
  leadsOf,
  providerIdsOf,
  salesOf,
  unique,
} from "./stripe-harness.ts";

/**
 * A pricing table or payment link: the browser tracker puts the click in `client_reference_id`, which only
 * the Checkout Session carries; the subscription's invoices carry the provider customer id and an email.
 */
function subscriptionCheckout(clickId: string | null, customer: string, subscription: string) {
  const session = checkoutSession({ mode: "subscription", clientReferenceId: clickId, customer });
  return { ...session, subscription };
}

describe("checkout.session.completed, mode subscription", () => {
  it("checkout first: binds the click's customer to the provider customer; the first invoice is attributed by it", async () => {
    const p = await connectedProgram({ commissionType: "recurring_percent", commissionRate: "10" });
    const clickId = await click(p, p.links[1]);
    const customerKey = unique("user");
    await lead(p, { click_id: clickId, customer_key: customerKey, email: "sub@example.com" }, null);
    const customer = id("cus");
    const subscription = id("sub");

    const bound = await deliver(
      event("checkout.session.completed", subscriptionCheckout(clickId, customer, subscription), {
        account: p.accountId,
      }),
    );
    expect(bound.body).toMatchObject({ outcome: "customer_bound", attributed_by: "client_reference_id" });
    expect(await salesOf(p.programId)).toHaveLength(0);
    const [row] = await customersOf(p.programId);
    expect(row).toMatchObject({
      id: bound.body.customer_id,
      clickId,
      partnerId: p.partnerIds[1],
      status: "lead",
      providerCustomerId: customer,
      customerKey,
    });
    // The provisional lead is settled, and the customer's signup is its time.
    const [leadRow] = await leadsOf(p.programId);
    expect(leadRow).toMatchObject({ customerId: row!.id });
    expect(leadRow!.settledAt).not.toBeNull();
    expect(row!.signedUpAt?.getTime()).toBe(leadRow!.createdAt.getTime());

    // The first invoice has no metadata and another email: the provider customer id attributes it.
    const first = await deliver(
      event("invoice.paid", invoice({ subscription, customer, email: "other@example.com" }), {
        account: p.accountId,
      }),
    );
    expect(first.body).toMatchObject({ outcome: "recorded", attributed_by: "provider_customer_id" });
    expect((await salesOf(p.programId))[0]).toMatchObject({
      partnerId: p.partnerIds[1],
      customerId: row!.id,
    });
    expect((await customersOf(p.programId))[0]).toMatchObject({ status: "converted" });
  });

  it("invoice first: kept (deferred), then recorded when the checkout binds the buyer", async () => {
    const p = await connectedProgram({ commissionType: "recurring_percent", commissionRate: "10" });
    const clickId = await click(p);
    const customer = id("cus");
    const subscription = id("sub");
    const inv = invoice({ subscription, customer, amount: 5_000 });
    const invoiceEvent = event("invoice.paid", inv, { account: p.accountId });

    const early = await deliver(invoiceEvent);
    expect(early.body).toMatchObject({
      outcome: "deferred",
      reason: "subscription's first invoice kept until its checkout binds the buyer",
    });
    expect(await salesOf(p.programId)).toHaveLength(0);
    expect(await keptPaymentsOf(p.programId)).toMatchObject([
      { eventId: invoiceEvent.id, objectId: inv.id, subscriptionId: subscription, appliedAt: null },
    ]);

    const bound = await deliver(
      event("checkout.session.completed", subscriptionCheckout(clickId, customer, subscription), {
        account: p.accountId,
      }),
    );
    expect(bound.body).toMatchObject({
      outcome: "customer_bound",
      attributed_by: "client_reference_id",
      kept_payments: [
        { event_id: invoiceEvent.id, outcome: "recorded", attributed_by: "provider_customer_id" },
      ],
    });
    const [sale] = await salesOf(p.programId);
    expect(sale).toMatchObject({ processorEventId: inv.id, partnerId: p.partnerIds[0], amountCents: 5_000 });
    expect(sale!.lineItems).toMatchObject({ stripe_event_id: invoiceEvent.id });
    expect(await commissionsOf(p.programId)).toMatchObject([{ amountCents: 500 }]);
    expect((await keptPaymentsOf(p.programId))[0]).toMatchObject({ outcome: "recorded" });
    expect((await keptPaymentsOf(p.programId))[0]?.appliedAt).not.toBeNull();

    // The second invoice event of that invoice, and the checkout delivered again, record nothing more.
    const twin = await deliver(event("invoice.payment_succeeded", inv, { account: p.accountId }));
    expect(twin.body).toMatchObject({ outcome: "duplicate", sale_id: sale!.id });
    const again = await deliver(
      event("checkout.session.completed", subscriptionCheckout(clickId, customer, subscription), {
        account: p.accountId,
      }),
    );
    expect(again.body).toMatchObject({ outcome: "customer_bound" });
    expect(again.body.kept_payments).toBeUndefined();
    expect(await salesOf(p.programId)).toHaveLength(1);
  });

  it("invoice first, and a checkout that matches nothing: the kept invoice is resolved, not recorded", async () => {
    const p = await connectedProgram();
    const customer = id("cus");
    const subscription = id("sub");
    await deliver(event("invoice.paid", invoice({ subscription, customer }), { account: p.accountId }));
    const response = await deliver(
      event("checkout.session.completed", subscriptionCheckout(null, customer, subscription), {
        account: p.accountId,
      }),
    );
    expect(response.body).toMatchObject({ outcome: "not_attributed" });
    expect((await keptPaymentsOf(p.programId))[0]).toMatchObject({ outcome: "not_attributed" });
    expect(await salesOf(p.programId)).toHaveLength(0);
    expect(await customersOf(p.programId)).toHaveLength(0);
  });

  it("an existing customer gets the session's provider customer id beside its first (its subscription's invoices carry it)", async () => {
    const p = await connectedProgram({ commissionType: "recurring_percent", commissionRate: "10" });
    const clickId = await click(p);
    const customerKey = unique("user");
    await lead(p, { click_id: clickId, customer_key: customerKey });
    // An earlier one-time purchase saved another provider customer.
    await deliver(
      event(
        "checkout.session.completed",
        checkoutSession({ customer: "cus_first_purchase", metadata: { service_click_id: clickId } }),
        { account: p.accountId },
      ),
    );
    const customer = id("cus");
    const session = checkoutSession({
      mode: "subscription",
      customer,
      email: null,
      metadata: { service_customer_key: customerKey },
    });
    const bound = await deliver(event("checkout.session.completed", session, { account: p.accountId }));
    expect(bound.body).toMatchObject({ outcome: "customer_bound", attributed_by: "service_customer_key" });
    const customers = await customersOf(p.programId);
    expect(customers).toMatchObject([
      { customerKey, status: "converted", providerCustomerId: "cus_first_purchase" },
    ]);
    expect(await providerIdsOf(p.programId)).toEqual({
      cus_first_purchase: customers[0]!.id,
      [customer]: customers[0]!.id,
    });

    // The subscription's renewal and a one-time payment under the first provider customer, neither with
    // metadata or email: each found by its own provider customer id.
    for (const [type, payment] of [
      ["invoice.paid", invoice({ customer, email: null, billingReason: "subscription_cycle" })],
      ["checkout.session.completed", checkoutSession({ customer: "cus_first_purchase", email: null })],
    ] as const) {
      const response = await deliver(event(type, payment, { account: p.accountId }));
      expect(response.body, type).toMatchObject({
        outcome: "recorded",
        attributed_by: "provider_customer_id",
      });
    }
  });

  it("a test-mode subscription checkout binds nothing", async () => {
    const p = await connectedProgram();
    const clickId = await click(p);
    const session = { ...subscriptionCheckout(clickId, id("cus"), id("sub")), livemode: false };
    const response = await deliver(
      event("checkout.session.completed", session, { account: p.accountId, livemode: false }),
    );
    expect(response.body).toMatchObject({
      outcome: "skipped",
      reason: "test-mode subscription checkout binds no customer",
    });
    expect(await customersOf(p.programId)).toHaveLength(0);
  });
});
