import { eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { programs } from "../../schema/index.ts";
import { commissionsOf } from "../workers/sale-harness.ts";
import {
  type ConnectedProgram,
  checkoutSession,
  click,
  connectedProgram,
  customersOf,
  db,
  deliver,
  event,
  id,
  invoice,
  lead,
  leadsOf,
  salesOf,
  unique,
} from "./stripe-harness.ts";

/**
 * Lead steering (issue 16): under `server_required` a partner clicks their own link and sends a keyless
 * browser lead (provisional) carrying someone else's email; a later payment by that person, without
 * metadata, is found by the email and settles the partner's lead. `email_attribution_settled_only` stops it.
 */
async function steeredProgram(settledOnly: boolean): Promise<{ p: ConnectedProgram; victim: string }> {
  const p = await connectedProgram({ leadAuthPolicy: "server_required", commissionRate: "20" });
  await db
    .update(programs)
    .set({ emailAttributionSettledOnly: settledOnly })
    .where(eq(programs.id, p.programId));
  const victim = `${unique("victim")}@example.com`;
  const partnersClick = await click(p, p.links[1]);
  const steered = await lead(p, { click_id: partnersClick, email: victim }, null);
  expect(steered).toMatchObject({ provisional: true });
  return { p, victim };
}

function paymentWithoutMetadata(p: ConnectedProgram, email: string) {
  return deliver(event("checkout.session.completed", checkoutSession({ email }), { account: p.accountId }));
}

describe("email attribution to settled leads only (lead steering)", () => {
  it("setting off (today's behaviour): the steered lead is settled and its partner earns a commission", async () => {
    const { p, victim } = await steeredProgram(false);
    const response = await paymentWithoutMetadata(p, victim);
    expect(response.body).toMatchObject({ outcome: "recorded", attributed_by: "email" });
    expect((await salesOf(p.programId))[0]).toMatchObject({ partnerId: p.partnerIds[1] });
    expect(await commissionsOf(p.programId)).toHaveLength(1);
    expect((await commissionsOf(p.programId))[0]).toMatchObject({ partnerId: p.partnerIds[1] });
    expect((await leadsOf(p.programId))[0]!.settledAt).not.toBeNull();
  });

  it("setting on: no sale, no commission for the partner, and the provisional lead stays unsettled", async () => {
    const { p, victim } = await steeredProgram(true);
    const response = await paymentWithoutMetadata(p, victim);
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({
      outcome: "not_attributed",
      reason: "no click, lead or customer matches this payment",
    });
    expect(await salesOf(p.programId)).toHaveLength(0);
    expect(await commissionsOf(p.programId)).toHaveLength(0);
    expect(await customersOf(p.programId)).toHaveLength(0);
    const [steered] = await leadsOf(p.programId);
    expect(steered).toMatchObject({ provisional: true, settledAt: null, customerId: null });
  });

  it("setting on: a settled lead with the buyer's email is still found by email", async () => {
    const p = await connectedProgram({ leadAuthPolicy: "server_required" });
    await db.update(programs).set({ emailAttributionSettledOnly: true }).where(eq(programs.id, p.programId));
    const email = `${unique("settled")}@example.com`;
    const clickId = await click(p, p.links[1]);
    await lead(p, { click_id: clickId, customer_key: unique("user"), email });
    const response = await paymentWithoutMetadata(p, email);
    expect(response.body).toMatchObject({ outcome: "recorded", attributed_by: "email" });
    expect((await salesOf(p.programId))[0]).toMatchObject({ partnerId: p.partnerIds[1] });
    expect(await commissionsOf(p.programId)).toHaveLength(1);
  });

  it("setting on: another rule that matches still attributes (the click in metadata settles the lead)", async () => {
    const p = await connectedProgram({ leadAuthPolicy: "server_required" });
    await db.update(programs).set({ emailAttributionSettledOnly: true }).where(eq(programs.id, p.programId));
    const email = `${unique("buyer")}@example.com`;
    const clickId = await click(p);
    await lead(p, { click_id: clickId, email }, null);
    const response = await deliver(
      event(
        "checkout.session.completed",
        checkoutSession({ email, metadata: { service_click_id: clickId } }),
        {
          account: p.accountId,
        },
      ),
    );
    expect(response.body).toMatchObject({ outcome: "recorded", attributed_by: "service_click_id" });
    expect((await leadsOf(p.programId))[0]!.settledAt).not.toBeNull();
  });

  it("setting on: a renewal invoice found only by email does not reach the steered lead either", async () => {
    const { p, victim } = await steeredProgram(true);
    const response = await deliver(
      event(
        "invoice.paid",
        invoice({ email: victim, customer: id("cus"), billingReason: "subscription_cycle" }),
        { account: p.accountId },
      ),
    );
    expect(response.body).toMatchObject({ outcome: "not_attributed" });
    expect(await commissionsOf(p.programId)).toHaveLength(0);
    expect((await leadsOf(p.programId))[0]).toMatchObject({ settledAt: null });
  });

  it("setting on: a subscription checkout found only by email binds no customer to the steered lead", async () => {
    const { p, victim } = await steeredProgram(true);
    const session = checkoutSession({ mode: "subscription", email: victim, customer: id("cus") });
    const response = await deliver(
      event("checkout.session.completed", { ...session, subscription: id("sub") }, { account: p.accountId }),
    );
    expect(response.body).toMatchObject({ outcome: "not_attributed" });
    expect(await customersOf(p.programId)).toHaveLength(0);
    expect((await leadsOf(p.programId))[0]).toMatchObject({ settledAt: null });
  });

  it("setting off: the same subscription checkout binds the steered lead's click (today's behaviour)", async () => {
    const { p, victim } = await steeredProgram(false);
    const session = checkoutSession({ mode: "subscription", email: victim, customer: id("cus") });
    const response = await deliver(
      event("checkout.session.completed", { ...session, subscription: id("sub") }, { account: p.accountId }),
    );
    expect(response.body).toMatchObject({ outcome: "customer_bound", attributed_by: "email" });
    expect((await customersOf(p.programId))[0]).toMatchObject({ partnerId: p.partnerIds[1] });
  });
});
