import Stripe from "stripe";

/**
 * A signed `checkout.session.completed` of a paid one-time checkout, as the provider sends it to the events
 * worker: `n` makes the event, session and PaymentIntent ids unique; `metadata` carries the buyer's
 * identifiers (a click id, a customer key). Signed with Node's crypto (the same header `stripe listen` sends).
 */
export function signedCheckoutEvent(
  n: string,
  options: { accountId: string; secret: string; metadata: Record<string, string>; email?: string },
): { body: string; signature: string } {
  const now = Math.floor(Date.now() / 1000);
  const event = {
    id: `evt_bench_${n}`,
    object: "event",
    api_version: "2026-10-28.endive",
    account: options.accountId,
    created: now,
    livemode: true,
    pending_webhooks: 1,
    request: { id: null, idempotency_key: null },
    type: "checkout.session.completed",
    data: {
      object: {
        id: `cs_bench_${n}`,
        object: "checkout.session",
        amount_subtotal: 4900,
        amount_total: 4900,
        client_reference_id: null,
        created: now,
        currency: "usd",
        customer: `cus_bench_${n}`,
        customer_details: { email: options.email ?? `buyer-${n}@example.com`, name: "Bench Buyer" },
        customer_email: null,
        livemode: true,
        metadata: options.metadata,
        mode: "payment",
        payment_intent: `pi_bench_${n}`,
        payment_status: "paid",
        status: "complete",
        subscription: null,
        total_details: { amount_discount: 0, amount_shipping: 0, amount_tax: 0 },
      },
    },
  };
  const body = JSON.stringify(event);
  const signature = Stripe.webhooks.generateTestHeaderString({ payload: body, secret: options.secret });
  return { body, signature };
}
