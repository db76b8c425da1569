import { type SQL, sql } from "drizzle-orm";
import { customers } from "../../schema/customers.ts";
import { leadEvents } from "../../schema/events.ts";
import { stripePendingPayments } from "../../schema/stripe-events.ts";
import type { Database } from "../db/client.ts";
import { columnList, columnName, fromDriver } from "../db/columns.ts";
import { wellFormedJson } from "../db/well-formed-json.ts";
import { linkProviderCustomerId } from "../tracking/sale/sale-store.ts";
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
  const t = customers;
  const statements: SQL[] = [];
  let customerId: SQL;
  if (c.kind === "create") {
    customerId = sql`(select ${t.id} from ${t} where ${t.programId} = ${c.programId}::int and ${t.clickId} = ${c.clickId}::text)`;
    statements.push(sql`
      with created as (
        insert into ${t} (${columnList(
          t.programId,
          t.partnerId,
          t.clickId,
          t.clickedAt,
          t.status,
          t.customerKey,
          t.emailHash,
          t.emailMasked,
          t.providerCustomerId,
          t.signedUpAt,
          t.createdAt,
          t.updatedAt,
        )})
        values (${c.programId}::int, ${c.partnerId}::int, ${c.clickId}, ${c.clickedAt.toISOString()}::timestamptz,
                'lead', ${c.customerKey ?? null}::text, ${c.email?.hash ?? null}::text, ${c.email?.masked ?? null}::text,
                ${c.providerCustomerId ?? null}::text, ${(c.signedUpAt ?? now).toISOString()}::timestamptz,
                ${at}::timestamptz, ${at}::timestamptz)
        on conflict do nothing
        returning ${t.id}, ${t.programId}, ${t.providerCustomerId}),
      ${linkProviderCustomerId(sql`created`)}
      select guard(exists (select 1 from created), 'customer created meanwhile')`);
  } else {
    customerId = sql`${c.id}::bigint`;
    // The session's provider customer id is bound to the customer beside any older one: this subscription's
    // invoices carry it, and the older one's payments still find the customer.
    statements.push(sql`
      with updated as (
      update ${t}
      set ${columnName(t.providerCustomerId)} = coalesce(${t.providerCustomerId}, ${c.providerCustomerId ?? null}::text),
          ${columnName(t.emailHash)} = coalesce(${t.emailHash}, ${c.email?.hash ?? null}::text),
          ${columnName(t.emailMasked)} =
            case when ${t.emailHash} is null then ${c.email?.masked ?? null}::text else ${t.emailMasked} end,
          ${columnName(t.signedUpAt)} =
            case when ${t.status} = 'clicked' then coalesce(${t.signedUpAt}, ${at}::timestamptz) else ${t.signedUpAt} end,
          ${columnName(t.status)} = case when ${t.status} = 'clicked' then 'lead' else ${t.status} end,
          ${columnName(t.updatedAt)} = ${at}::timestamptz
      where ${t.id} = ${c.id}::bigint
      returning ${t.id}, ${t.programId}, ${c.providerCustomerId ?? null}::text as provider_customer_id),
      ${linkProviderCustomerId(sql`updated`)}
      select 1`);
  }
  if (c.settleProvisionalOf) {
    const { programId, clickId } = c.settleProvisionalOf;
    const l = leadEvents;
    statements.push(sql`
      update ${l}
      set ${columnName(l.settledAt)} = ${at}::timestamptz, ${columnName(l.customerId)} = ${customerId}
      where ${l.programId} = ${programId}::int and ${l.clickId} = ${clickId}::text
        and ${l.provisional} and ${l.settledAt} is null and not ${l.isTest}`);
  }
  statements.push(sql`select ${customerId} as customer_id`);
  const results = await db.batch(
    statements.map((statement) => db.execute(statement)) as [ReturnType<Database["execute"]>],
  );
  const row = results[results.length - 1]?.rows[0];
  if (!row || row.customer_id === null) throw new Error("customer binding returned no customer");
  return fromDriver(t.id, row.customer_id);
}

/** Keeps a subscription's unattributed first invoice until its checkout binds the buyer. */
export async function keepPayment(
  db: Database,
  programId: number,
  eventId: string,
  payment: ProviderPayment,
): Promise<void> {
  const t = stripePendingPayments;
  await db.execute(sql`
    insert into ${t}
      (${columnList(t.programId, t.eventId, t.objectId, t.subscriptionId, t.providerCustomerId, t.payment)})
    values (${programId}::int, ${eventId}, ${payment.objectId}, ${payment.subscriptionId}::text,
            ${payment.providerCustomerId}::text, ${wellFormedJson(payment)}::jsonb)
    on conflict (${columnName(t.eventId)}) do nothing`);
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
  const t = stripePendingPayments;
  const result = await db.execute(sql`
    select ${t.eventId} as event_id, ${t.payment} as payment from ${t}
    where ${t.programId} = ${programId}::int and ${t.appliedAt} is null
      and (${t.subscriptionId} = ${subscriptionId}::text or ${t.providerCustomerId} = ${providerCustomerId}::text)
    order by ${t.id}`);
  return result.rows.map((r) => {
    const eventId = fromDriver(t.eventId, r.event_id);
    return { eventId, payment: paymentFrom(r.payment, eventId) };
  });
}

export async function resolveKeptPayment(
  db: Database,
  eventId: string,
  outcome: string,
  now: Date,
): Promise<void> {
  const t = stripePendingPayments;
  await db.execute(sql`
    update ${t} set ${columnName(t.appliedAt)} = ${now.toISOString()}::timestamptz, ${columnName(t.outcome)} = ${outcome}
    where ${t.eventId} = ${eventId} and ${t.appliedAt} is null`);
}
