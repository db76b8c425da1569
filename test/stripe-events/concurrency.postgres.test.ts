import { describe, expect, it } from "vitest";
import { balanceOf, commissionsOf } from "../workers/sale-harness.ts";
import {
  checkoutSession,
  click,
  connectedProgram,
  customersOf,
  deliver,
  event,
  eventRow,
  invoice,
  salesOf,
} from "./stripe-harness.ts";

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
