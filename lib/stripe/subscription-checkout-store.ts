import { type SQL, sql } from "drizzle-orm";
import type { Database } from "../db/client.ts";
import type { CustomerBindingDecision } from "./decide-provider-sale.ts";
import type { ProviderPayment } from "./provider-events.ts";

type Binding = Extract<CustomerBindingDecision, { outcome: "bind" }>;

/**
 * Writes a subscription checkout's binding in ONE transaction: the customer made from the click (status
 * `lead`, as a settling lead makes it; guarded, so a customer made meanwhile aborts the batch and the
 * retry updates that one instead) or the customer found, given the session's provider customer id (the
 * subscription's invoices carry that one), its email when it has none, and the click's provisional leads
 * settled. Returns the customer's id.
 */
export async function writeCustomerBinding(db: Database, binding: Binding, now: Date): Promise<number> {
  const at = now.toISOString();
  const c = binding.customer;
  const statements: SQL[] = [];
  let customerId: SQL;
  if (c.kind === "create") {
    customerId = sql`(select id from customers where program_id = ${c.programId}::int and click_id = ${c.clickId}::text)`;
    statements.push(sql`
      with created as (
        insert into customers (program_id, partner_id, click_id, clicked_at, status, customer_key, email_hash,
                               email_masked, provider_customer_id, signed_up_at, created_at, updated_at)
        values (${c.programId}::int, ${c.partnerId}::int, ${c.clickId}, ${c.clickedAt.toISOString()}::timestamptz,
                'lead', ${c.customerKey ?? null}::text, ${c.email?.hash ?? null}::text, ${c.email?.masked ?? null}::text,
                ${c.providerCustomerId ?? null}::text, ${(c.signedUpAt ?? now).toISOString()}::timestamptz,
                ${at}::timestamptz, ${at}::timestamptz)
        on conflict do nothing
        returning id)
      select guard(exists (select 1 from created), 'customer created meanwhile')`);
  } else {
    customerId = sql`${c.id}::bigint`;
    // The session's provider customer id replaces an older one: this subscription's invoices carry it.
    statements.push(sql`
      update customers
      set provider_customer_id = coalesce(${c.providerCustomerId ?? null}::text, provider_customer_id),
          email_hash = coalesce(email_hash, ${c.email?.hash ?? null}::text),
          email_masked = case when email_hash is null then ${c.email?.masked ?? null}::text else email_masked end,
          signed_up_at = case when status = 'clicked' then coalesce(signed_up_at, ${at}::timestamptz)
                         else signed_up_at end,
          status = case when status = 'clicked' then 'lead' else status end,
          updated_at = ${at}::timestamptz
      where id = ${c.id}::bigint`);
  }
  if (c.settleProvisionalOf) {
    const { programId, clickId } = c.settleProvisionalOf;
    statements.push(sql`
      update affiliate_lead_events
      set settled_at = ${at}::timestamptz, customer_id = ${customerId}
      where program_id = ${programId}::int and click_id = ${clickId}::text
        and provisional and settled_at is null and not is_test`);
  }
  statements.push(sql`select ${customerId} as customer_id`);
  const results = await db.batch(
    statements.map((statement) => db.execute(statement)) as [ReturnType<Database["execute"]>],
  );
  const row = results[results.length - 1]?.rows[0];
  if (!row || row.customer_id === null) throw new Error("customer binding returned no customer");
  return Number(row.customer_id);
}

/** Keeps a subscription's unattributed first invoice until its checkout binds the buyer. */
export async function keepPayment(
  db: Database,
  programId: number,
  eventId: string,
  payment: ProviderPayment,
): Promise<void> {
  await db.execute(sql`
    insert into stripe_pending_payments
      (program_id, event_id, object_id, subscription_id, provider_customer_id, payment)
    values (${programId}::int, ${eventId}, ${payment.objectId}, ${payment.subscriptionId}::text,
            ${payment.providerCustomerId}::text, ${JSON.stringify(payment)}::jsonb)
    on conflict (event_id) do nothing`);
}

function paymentFrom(value: unknown, eventId: string): ProviderPayment {
  const p = (typeof value === "string" ? JSON.parse(value) : value) as ProviderPayment | null;
  if (p?.kind !== "invoice" || typeof p.paymentId !== "string" || !Array.isArray(p.aliases)) {
    throw new Error(`kept payment of event ${eventId} is unreadable`);
  }
  return p;
}

/** The first invoices kept for a subscription (or its provider customer), oldest first (one round trip). */
export async function keptPaymentsFor(
  db: Database,
  programId: number,
  subscriptionId: string | null,
  providerCustomerId: string | null,
): Promise<Array<{ eventId: string; payment: ProviderPayment }>> {
  const result = await db.execute(sql`
    select event_id, payment from stripe_pending_payments
    where program_id = ${programId}::int and applied_at is null
      and (subscription_id = ${subscriptionId}::text or provider_customer_id = ${providerCustomerId}::text)
    order by id`);
  return result.rows.map((r) => ({
    eventId: String(r.event_id),
    payment: paymentFrom(r.payment, String(r.event_id)),
  }));
}

export async function resolveKeptPayment(
  db: Database,
  eventId: string,
  outcome: string,
  now: Date,
): Promise<void> {
  await db.execute(sql`
    update stripe_pending_payments set applied_at = ${now.toISOString()}::timestamptz, outcome = ${outcome}
    where event_id = ${eventId} and applied_at is null`);
}
