import { eq, sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { commissions, programs } from "../../schema/index.ts";
import { balanceOf, commissionsOf } from "../workers/sale-harness.ts";
import {
  ageClick,
  checkoutSession,
  click,
  connectedProgram,
  customersOf,
  db,
  deliver,
  event,
  eventRow,
  id,
  invoice,
  lead,
  leadsOf,
  providerIdsOf,
  saleByPayment,
  saleCall,
  salesOf,
  unique,
} from "./stripe-harness.ts";

describe("checkout.session.completed", () => {
  it("records a paid one-time checkout under its PaymentIntent id, attributed by service_click_id", async () => {
    const p = await connectedProgram({ commissionRate: "20" });
    const clickId = await click(p);
    const session = checkoutSession({
      amount: 10_000,
      tax: 1_000,
      metadata: { service_click_id: clickId, program_id: String(p.programId) },
      customer: "cus_first",
      email: "Jane@Example.com",
    });
    const e = event("checkout.session.completed", session, { account: p.accountId });
    const response = await deliver(e);
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({
      received: true,
      outcome: "recorded",
      attributed_by: "service_click_id",
    });

    const [sale] = await salesOf(p.programId);
    expect(sale).toMatchObject({
      processorEventId: session.payment_intent,
      providerPaymentId: session.payment_intent,
      source: "stripe",
      provider: "stripe",
      amountCents: 10_000,
      taxCents: 1_000,
      currency: "USD",
      saleType: "payment",
      partnerId: p.partnerIds[0],
      isTest: false,
      livemode: true,
      lineItems: { stripe_object_id: session.id, stripe_event_id: e.id },
    });
    expect(response.body.sale_id).toBe(sale!.id);
    const [commission] = await commissionsOf(p.programId);
    expect(commission).toMatchObject({ saleId: sale!.id, amountCents: 2_000, status: "approved" });
    expect(await balanceOf(p.programId, p.partnerIds[0])).toBe(2_000);
    const [customer] = await customersOf(p.programId);
    expect(customer).toMatchObject({
      clickId,
      partnerId: p.partnerIds[0],
      status: "converted",
      providerCustomerId: "cus_first",
      emailMasked: "j***@example.com",
    });
    expect(customer!.emailHash).toMatch(/^[0-9a-f]{64}$/);
    expect(await eventRow(e.id)).toMatchObject({
      status: "completed",
      outcome: "recorded",
      attempts: 1,
      programId: p.programId,
      accountId: p.accountId,
    });
  });

  it("records no sale for a subscription checkout (its invoice does), but binds the buyer", async () => {
    const p = await connectedProgram();
    const clickId = await click(p);
    const response = await deliver(
      event(
        "checkout.session.completed",
        checkoutSession({
          mode: "subscription",
          customer: "cus_bound",
          metadata: { service_click_id: clickId },
        }),
        { account: p.accountId },
      ),
    );
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({ outcome: "customer_bound", attributed_by: "service_click_id" });
    expect(await salesOf(p.programId)).toHaveLength(0);
    expect(await customersOf(p.programId)).toMatchObject([
      { clickId, status: "lead", providerCustomerId: "cus_bound" },
    ]);
  });

  it("skips a setup-mode checkout", async () => {
    const p = await connectedProgram();
    const response = await deliver(
      event("checkout.session.completed", checkoutSession({ mode: "setup" }), { account: p.accountId }),
    );
    expect(response.body).toMatchObject({
      outcome: "skipped",
      reason: "checkout mode setup records no sale",
    });
  });

  it("records a delayed payment when checkout.session.async_payment_succeeded arrives, not before", async () => {
    const p = await connectedProgram();
    const clickId = await click(p);
    const unpaid = checkoutSession({ paymentStatus: "unpaid", metadata: { service_click_id: clickId } });
    const completed = await deliver(event("checkout.session.completed", unpaid, { account: p.accountId }));
    expect(completed.body).toMatchObject({ outcome: "skipped", reason: "checkout payment_status unpaid" });
    expect(await salesOf(p.programId)).toHaveLength(0);

    const paid = { ...unpaid, payment_status: "paid" };
    const succeeded = await deliver(
      event("checkout.session.async_payment_succeeded", paid, { account: p.accountId }),
    );
    expect(succeeded.body).toMatchObject({ outcome: "recorded" });
    const sales = await salesOf(p.programId);
    expect(sales).toHaveLength(1);
    expect(sales[0]!.processorEventId).toBe(unpaid.payment_intent);
  });

  it("uses the session id when the checkout has no PaymentIntent", async () => {
    const p = await connectedProgram();
    const clickId = await click(p);
    const session = checkoutSession({ paymentIntent: null, metadata: { service_click_id: clickId } });
    await deliver(event("checkout.session.completed", session, { account: p.accountId }));
    expect((await salesOf(p.programId))[0]?.processorEventId).toBe(session.id);
  });

  it("skips an unsupported currency and a zero amount, recording nothing", async () => {
    const p = await connectedProgram();
    const clickId = await click(p);
    const gbp = await deliver(
      event(
        "checkout.session.completed",
        checkoutSession({ currency: "gbp", metadata: { service_click_id: clickId } }),
        { account: p.accountId },
      ),
    );
    expect(gbp.body).toMatchObject({ outcome: "skipped", reason: "currency GBP is not supported" });
    const free = await deliver(
      event(
        "checkout.session.completed",
        checkoutSession({ amount: 0, metadata: { service_click_id: clickId } }),
        {
          account: p.accountId,
        },
      ),
    );
    expect(free.body).toMatchObject({ outcome: "skipped", reason: "zero amount" });
    expect(await salesOf(p.programId)).toHaveLength(0);
  });

  it("records a test-mode event (livemode false) as a test sale with no commission and no customer", async () => {
    const p = await connectedProgram();
    const clickId = await click(p);
    const session = checkoutSession({ livemode: false, metadata: { service_click_id: clickId } });
    const response = await deliver(
      event("checkout.session.completed", session, { account: p.accountId, livemode: false }),
    );
    expect(response.body).toMatchObject({ outcome: "test_recorded" });
    const [sale] = await salesOf(p.programId);
    expect(sale).toMatchObject({
      isTest: true,
      livemode: false,
      partnerId: null,
      customerId: null,
      source: "stripe",
    });
    expect(await commissionsOf(p.programId)).toHaveLength(0);
    expect(await customersOf(p.programId)).toHaveLength(0);
  });

  it("does not attribute a click older than the attribution window", async () => {
    const p = await connectedProgram({ attributionWindowDays: 30 });
    const clickId = await click(p);
    await ageClick(clickId, 31);
    const response = await deliver(
      event("checkout.session.completed", checkoutSession({ metadata: { service_click_id: clickId } }), {
        account: p.accountId,
      }),
    );
    expect(response.body).toMatchObject({ outcome: "not_attributed" });
    expect(String(response.body.reason)).toContain("attribution window");
    expect(await salesOf(p.programId)).toHaveLength(0);
  });
});

describe("invoice.paid and invoice.payment_succeeded", () => {
  it("records a subscription's first payment from its subscription metadata (current API shape)", async () => {
    const p = await connectedProgram({ commissionType: "recurring_percent", commissionRate: "10" });
    const clickId = await click(p);
    const inv = invoice({ amount: 2_900, metadata: { service_click_id: clickId }, customer: "cus_sub" });
    const response = await deliver(event("invoice.paid", inv, { account: p.accountId }));
    expect(response.body).toMatchObject({ outcome: "recorded", attributed_by: "service_click_id" });
    const [sale] = await salesOf(p.programId);
    const parent = inv.parent as { subscription_details: { subscription: string } };
    const product = (inv.lines as { data: Array<{ pricing: { price_details: { product: string } } }> })
      .data[0]!.pricing.price_details.product;
    expect(sale).toMatchObject({
      // No PaymentIntent in the current invoice payload: the invoice id is the payment's id.
      processorEventId: inv.id,
      saleType: "subscription",
      isRecurring: true,
      subscriptionId: parent.subscription_details.subscription,
      productId: product,
      amountCents: 2_900,
      source: "stripe",
    });
    expect((await commissionsOf(p.programId))[0]).toMatchObject({ amountCents: 290 });
  });

  it("records one sale when both invoice events of one invoice arrive (legacy shape, PaymentIntent id)", async () => {
    const p = await connectedProgram();
    const clickId = await click(p);
    const inv = invoice({ legacy: true, metadata: { service_click_id: clickId } });
    const first = await deliver(event("invoice.payment_succeeded", inv, { account: p.accountId }));
    const second = await deliver(event("invoice.paid", inv, { account: p.accountId }));
    expect(first.body).toMatchObject({ outcome: "recorded" });
    expect(second.body).toMatchObject({
      outcome: "duplicate",
      sale_id: first.body.sale_id,
      recorded_by: "events",
    });
    const sales = await salesOf(p.programId);
    expect(sales).toHaveLength(1);
    expect(sales[0]).toMatchObject({ processorEventId: inv.payment_intent, subscriptionInterval: "monthly" });
    expect(await commissionsOf(p.programId)).toHaveLength(1);
  });

  it("skips a zero-amount invoice and a one-off invoice", async () => {
    const p = await connectedProgram();
    const clickId = await click(p);
    const trial = await deliver(
      event("invoice.paid", invoice({ amount: 0, metadata: { service_click_id: clickId } }), {
        account: p.accountId,
      }),
    );
    expect(trial.body).toMatchObject({ outcome: "skipped", reason: "zero amount" });
    const oneOff = invoice({ metadata: { service_click_id: clickId }, billingReason: "manual" });
    delete (oneOff as { parent?: unknown }).parent;
    const manual = await deliver(event("invoice.paid", oneOff, { account: p.accountId }));
    expect(manual.body).toMatchObject({ outcome: "skipped", reason: "not a subscription invoice" });
    expect(await salesOf(p.programId)).toHaveLength(0);
  });

  it("leaves the customer's row unwritten on a renewal that brings nothing new, and writes the email it lacked", async () => {
    const p = await connectedProgram({ commissionType: "recurring_percent", commissionRate: "10" });
    const clickId = await click(p);
    const subscription = id("sub");
    const customer = id("cus");
    const rowVersion = async () => {
      const { rows } = await db.execute<{ version: string; email_hash: string | null }>(
        sql`select xmin::text as version, email_hash from customers where program_id = ${p.programId}`,
      );
      expect(rows).toHaveLength(1);
      return rows[0];
    };
    const pay = async (email: string | null, metadata?: Record<string, string>) => {
      const response = await deliver(
        event(
          "invoice.paid",
          invoice({
            subscription,
            customer,
            email,
            metadata,
            billingReason: metadata ? "subscription_create" : "subscription_cycle",
          }),
          {
            account: p.accountId,
          },
        ),
      );
      expect(response.body).toMatchObject({ outcome: "recorded" });
    };
    await pay(null, { service_click_id: clickId });
    const first = await rowVersion();
    expect(first?.email_hash).toBeNull();

    // The same provider customer, no email: the row already says all of it.
    await pay(null);
    expect(await rowVersion()).toEqual(first);

    // An email the row lacks: written.
    const email = `${unique("renew")}@example.com`;
    await pay(email);
    const withEmail = await rowVersion();
    expect(withEmail?.email_hash).not.toBeNull();
    expect(withEmail?.version).not.toBe(first?.version);

    // The same email again: left alone.
    await pay(email);
    expect(await rowVersion()).toEqual(withEmail);
    expect(await salesOf(p.programId)).toHaveLength(4);
    expect(await commissionsOf(p.programId)).toHaveLength(4);
  });

  it("matches renewals without metadata by the saved provider customer id, and by email", async () => {
    const p = await connectedProgram({ commissionType: "recurring_percent", commissionRate: "10" });
    const clickId = await click(p);
    const subscription = id("sub");
    const email = `${unique("renew")}@example.com`;
    await deliver(
      event(
        "invoice.paid",
        invoice({ subscription, customer: "cus_renew", email, metadata: { service_click_id: clickId } }),
        { account: p.accountId },
      ),
    );
    expect((await customersOf(p.programId))[0]).toMatchObject({ providerCustomerId: "cus_renew" });

    // Renewal 1: no metadata, no email; the provider customer id saved by the first payment matches.
    const byId = await deliver(
      event(
        "invoice.paid",
        invoice({ subscription, customer: "cus_renew", email: null, billingReason: "subscription_cycle" }),
        { account: p.accountId },
      ),
    );
    expect(byId.body).toMatchObject({ outcome: "recorded", attributed_by: "provider_customer_id" });

    // Renewal 2: another provider customer, the same email (the first payment saved its hash).
    const byEmail = await deliver(
      event(
        "invoice.paid",
        invoice({
          subscription,
          customer: "cus_other",
          email: ` ${email.toUpperCase()} `,
          billingReason: "subscription_cycle",
        }),
        { account: p.accountId },
      ),
    );
    expect(byEmail.body).toMatchObject({ outcome: "recorded", attributed_by: "email" });
    expect(await salesOf(p.programId)).toHaveLength(3);
    expect(await commissionsOf(p.programId)).toHaveLength(3);
    expect(await customersOf(p.programId)).toHaveLength(1);
  });

  it("matches payments under every provider customer id the customer paid under, not only its first", async () => {
    const p = await connectedProgram({ commissionType: "recurring_percent", commissionRate: "10" });
    const clickId = await click(p);
    // A one-time purchase under one provider customer, then a subscription bought under another.
    const oneTime = await deliver(
      event(
        "checkout.session.completed",
        checkoutSession({ customer: "cus_one_time", email: null, metadata: { service_click_id: clickId } }),
        { account: p.accountId },
      ),
    );
    expect(oneTime.body).toMatchObject({ outcome: "recorded", attributed_by: "service_click_id" });
    const subscription = id("sub");
    const first = await deliver(
      event(
        "invoice.paid",
        invoice({
          subscription,
          customer: "cus_subscriber",
          email: null,
          metadata: { service_click_id: clickId },
        }),
        { account: p.accountId },
      ),
    );
    expect(first.body).toMatchObject({ outcome: "recorded", attributed_by: "service_click_id" });
    const [customer] = await customersOf(p.programId);
    expect(customer).toMatchObject({ providerCustomerId: "cus_one_time" });
    expect(await providerIdsOf(p.programId)).toEqual({
      cus_one_time: customer!.id,
      cus_subscriber: customer!.id,
    });

    // A renewal without metadata or email under the subscription's provider customer, and a payment under the
    // first one: both find the customer by its provider customer id.
    const renewal = invoice({
      subscription,
      customer: "cus_subscriber",
      email: null,
      billingReason: "subscription_cycle",
    });
    for (const [type, payment] of [
      ["invoice.paid", renewal],
      ["checkout.session.completed", checkoutSession({ customer: "cus_one_time", email: null })],
    ] as const) {
      const response = await deliver(event(type, payment, { account: p.accountId }));
      expect(response.body, type).toMatchObject({
        outcome: "recorded",
        attributed_by: "provider_customer_id",
      });
    }
    expect(await salesOf(p.programId)).toHaveLength(4);
    expect(await commissionsOf(p.programId)).toHaveLength(4);
    expect(await customersOf(p.programId)).toHaveLength(1);
  });

  it("still finds a customer by the id in its own column where no binding holds it (a write of a worker deployed before 0056)", async () => {
    const p = await connectedProgram();
    const clickId = await click(p);
    await deliver(
      event(
        "checkout.session.completed",
        checkoutSession({
          customer: "cus_column_only",
          email: null,
          metadata: { service_click_id: clickId },
        }),
        { account: p.accountId },
      ),
    );
    await db.execute(sql`delete from customer_provider_ids where program_id = ${p.programId}`);
    const again = await deliver(
      event("checkout.session.completed", checkoutSession({ customer: "cus_column_only", email: null }), {
        account: p.accountId,
      }),
    );
    expect(again.body).toMatchObject({ outcome: "recorded", attributed_by: "provider_customer_id" });
    const [sale] = (await salesOf(p.programId)).slice(-1);
    expect(sale).toMatchObject({ partnerId: (await customersOf(p.programId))[0]!.partnerId });
  });

  it("leaves a provider customer id with the customer that paid under it first", async () => {
    const p = await connectedProgram();
    const [firstClick, secondClick] = [await click(p), await click(p, p.links[1])];
    for (const clickId of [firstClick, secondClick]) {
      const response = await deliver(
        event(
          "checkout.session.completed",
          checkoutSession({ customer: "cus_shared", email: null, metadata: { service_click_id: clickId } }),
          { account: p.accountId },
        ),
      );
      expect(response.body).toMatchObject({ outcome: "recorded", attributed_by: "service_click_id" });
    }
    const [first, second] = await customersOf(p.programId);
    expect(second).toMatchObject({ providerCustomerId: "cus_shared" });
    expect(await providerIdsOf(p.programId)).toEqual({ cus_shared: first!.id });

    const again = await deliver(
      event("checkout.session.completed", checkoutSession({ customer: "cus_shared", email: null }), {
        account: p.accountId,
      }),
    );
    expect(again.body).toMatchObject({ outcome: "recorded", attributed_by: "provider_customer_id" });
    const sales = await salesOf(p.programId);
    expect(sales.at(-1)).toMatchObject({ partnerId: first!.partnerId });
  });

  it("does not attribute a renewal without metadata that matches no customer", async () => {
    const p = await connectedProgram();
    const e = event("invoice.paid", invoice({ billingReason: "subscription_cycle" }), {
      account: p.accountId,
    });
    const response = await deliver(e);
    expect(response.body).toMatchObject({
      outcome: "not_attributed",
      reason: "no click, lead or customer matches this payment",
    });
    expect(await salesOf(p.programId)).toHaveLength(0);
    expect(await eventRow(e.id)).toMatchObject({
      status: "completed",
      outcome: "not_attributed",
    });
  });
});

describe("attribution order (spec section 6)", () => {
  it("2. email: the buyer's email matches the lead's (hashed, case and spaces ignored)", async () => {
    const p = await connectedProgram();
    const clickId = await click(p, p.links[1]);
    await lead(p, { click_id: clickId, customer_key: unique("user"), email: "Lead.Person@Example.com" });
    const response = await deliver(
      event("checkout.session.completed", checkoutSession({ email: "  lead.person@example.COM" }), {
        account: p.accountId,
      }),
    );
    expect(response.body).toMatchObject({ outcome: "recorded", attributed_by: "email" });
    expect((await salesOf(p.programId))[0]).toMatchObject({ partnerId: p.partnerIds[1] });
    expect((await customersOf(p.programId))[0]).toMatchObject({ status: "converted", clickId });
  });

  it("2. email of a provisional lead: settles it, creating the customer as a settling lead would", async () => {
    const p = await connectedProgram({ leadAuthPolicy: "server_required" });
    const clickId = await click(p);
    const customerKey = unique("user");
    const provisional = await lead(
      p,
      { click_id: clickId, customer_key: customerKey, email: "prov@example.com" },
      null,
    );
    expect(provisional).toMatchObject({ provisional: true });
    expect(await customersOf(p.programId)).toHaveLength(0);

    const response = await deliver(
      event("checkout.session.completed", checkoutSession({ email: "prov@example.com" }), {
        account: p.accountId,
      }),
    );
    expect(response.body).toMatchObject({ outcome: "recorded", attributed_by: "email" });
    const [customer] = await customersOf(p.programId);
    const [leadEvent] = await leadsOf(p.programId);
    expect(customer).toMatchObject({ clickId, customerKey, status: "converted", partnerId: p.partnerIds[0] });
    expect(customer!.signedUpAt?.getTime()).toBe(leadEvent!.createdAt.getTime());
    expect(leadEvent).toMatchObject({ provisional: true, customerId: customer!.id });
    expect(leadEvent!.settledAt).not.toBeNull();
  });

  it("1. service_click_id settles the click's provisional lead too", async () => {
    const p = await connectedProgram({ leadAuthPolicy: "server_required" });
    const clickId = await click(p);
    const customerKey = unique("user");
    await lead(p, { click_id: clickId, customer_key: customerKey }, null);
    await deliver(
      event("checkout.session.completed", checkoutSession({ metadata: { service_click_id: clickId } }), {
        account: p.accountId,
      }),
    );
    const [customer] = await customersOf(p.programId);
    expect(customer).toMatchObject({ customerKey });
    expect((await leadsOf(p.programId))[0]).toMatchObject({ customerId: customer!.id });
    expect((await leadsOf(p.programId))[0]!.settledAt).not.toBeNull();
  });

  it("3. provider customer id: a later checkout of the same buyer, with nothing else", async () => {
    const p = await connectedProgram({ commissionType: "recurring_percent", commissionRate: "10" });
    const clickId = await click(p, p.links[1]);
    await deliver(
      event(
        "checkout.session.completed",
        checkoutSession({ customer: "cus_again", metadata: { service_click_id: clickId } }),
        { account: p.accountId },
      ),
    );
    const response = await deliver(
      event("checkout.session.completed", checkoutSession({ customer: "cus_again", email: null }), {
        account: p.accountId,
      }),
    );
    expect(response.body).toMatchObject({ outcome: "recorded", attributed_by: "provider_customer_id" });
    expect((await salesOf(p.programId)).map((s) => s.partnerId)).toEqual([p.partnerIds[1], p.partnerIds[1]]);
  });

  it("4. client_reference_id, only when the metadata has no click", async () => {
    const p = await connectedProgram();
    const clickId = await click(p);
    const withClickKey = await deliver(
      event(
        "checkout.session.completed",
        checkoutSession({ clientReferenceId: clickId, metadata: { service_click_id: "clk_unknown" } }),
        { account: p.accountId },
      ),
    );
    expect(withClickKey.body).toMatchObject({ outcome: "not_attributed" });
    const plain = await deliver(
      event("checkout.session.completed", checkoutSession({ clientReferenceId: clickId }), {
        account: p.accountId,
      }),
    );
    expect(plain.body).toMatchObject({ outcome: "recorded", attributed_by: "client_reference_id" });
    expect(await salesOf(p.programId)).toHaveLength(1);
  });

  it("5. service_customer_key alone: the customer whose settled lead saved it", async () => {
    const p = await connectedProgram();
    const clickId = await click(p, p.links[1]);
    const customerKey = unique("user");
    await lead(p, { click_id: clickId, customer_key: customerKey });
    const response = await deliver(
      event(
        "checkout.session.completed",
        checkoutSession({ email: null, customer: null, metadata: { service_customer_key: customerKey } }),
        { account: p.accountId },
      ),
    );
    expect(response.body).toMatchObject({ outcome: "recorded", attributed_by: "service_customer_key" });
    expect((await salesOf(p.programId))[0]).toMatchObject({ partnerId: p.partnerIds[1] });
  });

  it("5. service_customer_key of a provisional lead", async () => {
    const p = await connectedProgram();
    const clickId = await click(p);
    const customerKey = unique("user");
    await lead(p, { click_id: clickId, customer_key: customerKey }, null);
    const response = await deliver(
      event(
        "checkout.session.completed",
        checkoutSession({ email: null, metadata: { service_customer_key: customerKey } }),
        { account: p.accountId },
      ),
    );
    expect(response.body).toMatchObject({ outcome: "recorded", attributed_by: "service_customer_key" });
    expect((await customersOf(p.programId))[0]).toMatchObject({ customerKey, clickId });
  });

  it("takes the earlier step when several match: the click wins over the email's customer", async () => {
    const p = await connectedProgram();
    const clickA = await click(p, p.links[0]);
    const clickB = await click(p, p.links[1]);
    await lead(p, { click_id: clickB, customer_key: unique("user"), email: "both@example.com" });
    const response = await deliver(
      event(
        "checkout.session.completed",
        checkoutSession({ email: "both@example.com", metadata: { service_click_id: clickA } }),
        { account: p.accountId },
      ),
    );
    expect(response.body).toMatchObject({ outcome: "recorded", attributed_by: "service_click_id" });
    expect((await salesOf(p.programId))[0]).toMatchObject({ partnerId: p.partnerIds[0] });
  });

  it("does not attribute when the metadata keys name another program (acknowledged, nothing recorded)", async () => {
    const p = await connectedProgram();
    const other = await connectedProgram();
    const clickId = await click(p);
    const foreignClick = await click(other);
    const cases: Array<Record<string, string>> = [
      { service_click_id: clickId, program_id: String(other.programId) },
      { service_click_id: foreignClick },
      { service_click_id: clickId, program_id: "not-a-number" },
    ];
    for (const metadata of cases) {
      const response = await deliver(
        event("checkout.session.completed", checkoutSession({ metadata }), { account: p.accountId }),
      );
      expect(response.status).toBe(200);
      expect(response.body.outcome).toBe("not_attributed");
    }
    const otherKey = unique("user");
    await lead(other, { click_id: foreignClick, customer_key: otherKey });
    // A customer key names a customer of the brand: of another program of the same workspace.
    await db.execute(
      sql`update programs set advertiser_id = (select advertiser_id from programs where id = ${p.programId})
          where id = ${other.programId}`,
    );
    const keyResponse = await deliver(
      event("checkout.session.completed", checkoutSession({ metadata: { service_customer_key: otherKey } }), {
        account: p.accountId,
      }),
    );
    expect(keyResponse.body).toMatchObject({ outcome: "not_attributed" });
    expect(String(keyResponse.body.reason)).toContain("service_customer_key belongs to another program");
    expect(await salesOf(p.programId)).toHaveLength(0);
    expect(await salesOf(other.programId)).toHaveLength(0);
  });
});

describe("a customer key another workspace uses", () => {
  it("is another brand's customer: it neither blocks this program's click nor its renewals", async () => {
    const p = await connectedProgram({ commissionType: "recurring_percent", commissionRate: "10" });
    const stranger = await connectedProgram();
    const sharedKey = unique("user");
    await lead(stranger, { click_id: await click(stranger), customer_key: sharedKey });

    const clickId = await click(p);
    const subscription = id("sub");
    const first = await deliver(
      event(
        "invoice.paid",
        invoice({ subscription, metadata: { service_click_id: clickId, service_customer_key: sharedKey } }),
        { account: p.accountId },
      ),
    );
    expect(first.body).toMatchObject({ outcome: "recorded", attributed_by: "service_click_id" });
    const renewal = await deliver(
      event(
        "invoice.paid",
        invoice({
          subscription,
          billingReason: "subscription_cycle",
          metadata: { service_click_id: clickId, service_customer_key: sharedKey },
        }),
        { account: p.accountId },
      ),
    );
    expect(renewal.body).toMatchObject({ outcome: "recorded" });
    expect(await commissionsOf(p.programId)).toHaveLength(2);
  });
});

describe("accounts and event types", () => {
  it("acknowledges an event of an unknown account, or without one, recording nothing", async () => {
    const p = await connectedProgram();
    const clickId = await click(p);
    const session = checkoutSession({ metadata: { service_click_id: clickId } });
    const unknown = event("checkout.session.completed", session, { account: "acct_nobody_knows" });
    const platform = event("checkout.session.completed", session, { account: null });
    for (const e of [unknown, platform]) {
      const response = await deliver(e);
      expect(response.status).toBe(200);
      expect(response.body).toMatchObject({ received: true, outcome: "ignored" });
      expect(await eventRow(e.id)).toBeUndefined();
    }
    expect(await saleByPayment(String(session.payment_intent))).toBeUndefined();
  });

  it("acknowledges event types it does not handle", async () => {
    const p = await connectedProgram();
    const response = await deliver(
      event("customer.created", { id: id("cus"), object: "customer" }, { account: p.accountId }),
    );
    expect(response).toEqual({
      status: 200,
      body: { received: true, outcome: "ignored", reason: "event type not handled" },
    });
  });

  it("maps the account to its program through programs.stripe_account_id", async () => {
    const p = await connectedProgram();
    const [row] = await db.select().from(programs).where(eq(programs.id, p.programId));
    expect(row?.stripeAccountId).toBe(p.accountId);
  });
});

describe("one dedupe key with the sale endpoint (the payment id)", () => {
  it("sale endpoint first, then the event: the event is acknowledged and records nothing", async () => {
    const p = await connectedProgram();
    const clickId = await click(p);
    const session = checkoutSession({ metadata: { service_click_id: clickId } });
    const api = await saleCall(p, {
      transaction_id: session.payment_intent,
      amount_cents: 10_000,
      click_id: clickId,
    });
    expect(api.status).toBe(200);
    const response = await deliver(event("checkout.session.completed", session, { account: p.accountId }));
    expect(response.body).toMatchObject({
      outcome: "duplicate",
      sale_id: api.body.sale_id,
      recorded_by: "sale endpoint",
    });
    const sales = await salesOf(p.programId);
    expect(sales).toHaveLength(1);
    expect(sales[0]).toMatchObject({ source: "api" });
    expect(await db.select().from(commissions).where(eq(commissions.programId, p.programId))).toHaveLength(1);
  });

  it("the event first, then the sale endpoint: 409 duplicate_transaction", async () => {
    const p = await connectedProgram();
    const clickId = await click(p);
    const session = checkoutSession({ metadata: { service_click_id: clickId } });
    const recorded = await deliver(event("checkout.session.completed", session, { account: p.accountId }));
    const api = await saleCall(p, {
      transaction_id: session.payment_intent,
      amount_cents: 10_000,
      click_id: clickId,
    });
    expect(api.status).toBe(409);
    expect(api.body).toMatchObject({
      error: { code: "duplicate_transaction", details: { sale_id: recorded.body.sale_id } },
    });
    expect(await salesOf(p.programId)).toHaveLength(1);
  });
});
