import { eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { commissions, programs } from "../../schema/index.ts";
import {
  type ConnectedProgram,
  charge,
  checkoutSession,
  click,
  connectedProgram,
  db,
  deliver,
  dispute,
  event,
  eventRow,
  failingTrigger,
  notificationsOf,
  refundsOfSale,
} from "./stripe-harness.ts";

// A reversal's notifications are written in the refund's own transaction (`writeRefund`): they are there
// when the event's answer arrives, never a moment later.

async function paidCheckout(p: ConnectedProgram) {
  const clickId = await click(p);
  const session = checkoutSession({ amount: 10_000, metadata: { service_click_id: clickId } });
  const response = await deliver(event("checkout.session.completed", session, { account: p.accountId }));
  expect(response.body.outcome).toBe("recorded");
  return { paymentIntent: String(session.payment_intent), saleId: Number(response.body.sale_id) };
}

async function advertiserOf(programId: number): Promise<number> {
  const [row] = await db.select().from(programs).where(eq(programs.id, programId));
  return row!.advertiserId;
}

describe("notifications of the events worker (written with the refund)", () => {
  it("charge.refunded: the partner is notified of the reduced commission", async () => {
    const p = await connectedProgram({ commissionRate: "20" });
    const { paymentIntent, saleId } = await paidCheckout(p);
    const response = await deliver(
      event(
        "charge.refunded",
        charge({ paymentIntent, amount: 10_000, amountRefunded: 2_500, refundIds: ["re_notify"] }),
        { account: p.accountId },
      ),
    );
    expect(response.body).toMatchObject({ outcome: "refunded" });
    const [refund] = await refundsOfSale(saleId);
    const [commission] = await db.select().from(commissions).where(eq(commissions.saleId, saleId));
    expect(await notificationsOf(p.programId)).toMatchObject([
      {
        recipientType: "partner",
        recipientId: p.partnerIds[0],
        kind: "commission_refunded",
        dedupeKey: `refund:${refund!.id}:partner`,
        payload: {
          commission_id: commission!.id,
          status: "refunded",
          deduction_cents: 500,
          currency: "USD",
          reason: "refund",
        },
      },
    ]);
  });

  it("charge.dispute.created of a paid-out commission: the advertiser is asked to review it", async () => {
    const p = await connectedProgram({ commissionRate: "20" });
    const { paymentIntent, saleId } = await paidCheckout(p);
    await db
      .update(commissions)
      .set({ status: "paid", paidOutAt: new Date() })
      .where(eq(commissions.saleId, saleId));
    const d = dispute({ paymentIntent, amount: 10_000 });
    const response = await deliver(event("charge.dispute.created", d, { account: p.accountId }));
    expect(response.body).toMatchObject({ outcome: "reversed" });

    expect(await notificationsOf(p.programId)).toHaveLength(2);
    const [refund] = await refundsOfSale(saleId);
    const byRecipient = Object.fromEntries(
      (await notificationsOf(p.programId)).map((n) => [n.recipientType, n]),
    );
    expect(byRecipient.partner).toMatchObject({
      recipientId: p.partnerIds[0],
      kind: "commission_reversed",
      payload: { status: "reversed", reason: "chargeback", deduction_cents: 2_000 },
    });
    expect(byRecipient.advertiser).toMatchObject({
      recipientId: await advertiserOf(p.programId),
      kind: "paid_commission_reversed_review",
      dedupeKey: `refund:${refund!.id}:advertiser`,
      payload: {
        status: "reversed",
        reason: "chargeback",
        partner_id: p.partnerIds[0],
        action: "Review this paid-out commission manually.",
      },
    });
  });

  it("a refund written by a delivery whose completion then fails is notified once (in the refund's transaction)", async () => {
    const p = await connectedProgram({ commissionRate: "20" });
    const { paymentIntent, saleId } = await paidCheckout(p);
    const e = event("charge.refunded", charge({ paymentIntent, amount: 10_000, amountRefunded: 10_000 }), {
      account: p.accountId,
    });
    const drop = await failingTrigger(
      "stripe_events",
      "before update",
      `new.status = 'completed' and new.event_id = '${e.id}'`,
    );
    try {
      const failed = await deliver(e);
      expect(failed.status).toBe(500);
      expect(await eventRow(e.id)).toMatchObject({ status: "failed" });
      expect(await refundsOfSale(saleId)).toHaveLength(1);
      expect(await notificationsOf(p.programId)).toHaveLength(1);
    } finally {
      await drop();
    }

    // The provider's retry finds the refund applied: it completes and reports nothing new.
    const retried = await deliver(e);
    expect(retried.body).toMatchObject({ outcome: "skipped", reason: "refund already recorded" });
    expect(await eventRow(e.id)).toMatchObject({ status: "completed", attempts: 2 });
    expect(await notificationsOf(p.programId)).toMatchObject([
      { recipientType: "partner", kind: "commission_reversed" },
    ]);
  });
});
