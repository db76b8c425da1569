import { sql } from "drizzle-orm";
import { alias } from "drizzle-orm/pg-core";
import { commissions, refunds } from "../../schema/commissions.ts";
import { saleEvents } from "../../schema/events.ts";
import { paymentAliases } from "../../schema/payment-aliases.ts";
import type { Database } from "../db/client.ts";
import { columnName, fromDriver } from "../db/columns.ts";
import { textList } from "../db/sql-lists.ts";
import { paymentIdsInsert } from "../sales/payment-ids-insert.ts";
import { type PaymentNamespace, paymentNamespace } from "../sales/payment-namespace.ts";
import type { ProviderInvoicePayment } from "./provider-events.ts";

type Row = Record<string, unknown>;

/** A sale as `invoice_payment.paid` sees it. */
export interface AliasedSale {
  id: number;
  source: string;
}

/** The sales already recorded for the invoice and for the PaymentIntent that paid it (either may be none). */
export interface InvoicePaymentFacts {
  invoiceSale: AliasedSale | null;
  paymentSale: AliasedSale | null;
}

export type InvoicePaymentDecision =
  /** Neither is recorded yet: keep the alias unlinked; the invoice's sale links it when written. */
  | { action: "keep" }
  /** One side is recorded: the other side's ids become its aliases. */
  | { action: "link"; sale: AliasedSale; paymentId: string; aliases: string[] }
  | { action: "already_linked"; sale: AliasedSale }
  /**
   * The same payment was recorded twice before the link was known (the sale endpoint under the
   * PaymentIntent id, the events under the invoice id): the events' sale is reversed as a duplicate.
   * `reverse` is null when both were recorded by the sale endpoint (the events never reverse those).
   */
  | { action: "duplicate"; keep: AliasedSale; reverse: AliasedSale | null };

const s = alias(saleEvents, "s");
const a = alias(paymentAliases, "a");

function saleFrom(value: unknown): AliasedSale | null {
  if (!value || typeof value !== "object") return null;
  const r = value as Row;
  return { id: fromDriver(s.id, r.id), source: fromDriver(s.source, r.source) };
}

/** One round trip: the program's sale recorded under (or aliased by) the invoice id, and the payment's. */
export async function readInvoicePaymentFacts(
  db: Database,
  programId: number,
  payment: ProviderInvoicePayment,
): Promise<InvoicePaymentFacts> {
  const ns = paymentNamespace(!payment.livemode, programId);
  const saleOf = (ids: string[]) => sql`(select row_to_json(x) from (
      select ${s.id} as id, ${s.source} as source from ${saleEvents} ${s}
      where ${s.programId} = ${programId}::int
        and (${s.processorEventId} in ${textList(ids)} and ${s.idNamespace} = ${ns}::text
             or ${s.id} in (select ${a.saleId} from ${paymentAliases} ${a}
                            where ${a.namespace} = ${ns}::text and ${a.alias} in ${textList(ids)}
                              and ${a.saleId} is not null))
      order by ${s.id} limit 1) x)`;
  const result = await db.execute(sql`
    select ${saleOf([payment.invoiceId])} as invoice_sale, ${saleOf(payment.paymentIds)} as payment_sale`);
  const row = result.rows[0] ?? {};
  return { invoiceSale: saleFrom(row.invoice_sale), paymentSale: saleFrom(row.payment_sale) };
}

/** Which PaymentIntent paid which invoice, against what is recorded (pure). */
export function decideInvoicePayment(
  payment: ProviderInvoicePayment,
  facts: InvoicePaymentFacts,
): InvoicePaymentDecision {
  const { invoiceSale, paymentSale } = facts;
  if (!invoiceSale && !paymentSale) return { action: "keep" };
  if (invoiceSale && !paymentSale) {
    return { action: "link", sale: invoiceSale, paymentId: payment.invoiceId, aliases: payment.paymentIds };
  }
  if (paymentSale && !invoiceSale) {
    return {
      action: "link",
      sale: paymentSale,
      paymentId: payment.paymentIds[0] ?? payment.invoiceId,
      aliases: [payment.invoiceId],
    };
  }
  const [first, second] = [invoiceSale, paymentSale] as [AliasedSale, AliasedSale];
  if (first.id === second.id) return { action: "already_linked", sale: first };
  // Spec section 6: the provider's events never reverse a sale of the sale endpoint ("not linked").
  const events = [first, second].filter((s) => s.source === "stripe");
  if (events.length === 0) return { action: "duplicate", keep: first, reverse: null };
  if (events.length === 1) {
    const reverse = events[0] as AliasedSale;
    return { action: "duplicate", keep: reverse === first ? second : first, reverse };
  }
  const [older, newer] = first.id < second.id ? [first, second] : [second, first];
  return { action: "duplicate", keep: older, reverse: newer };
}

/**
 * Records `aliases` as other names of `paymentId`, pointing to `saleId` (null: not recorded yet). An alias
 * kept unlinked is linked; one already pointing to a sale is left as it is.
 */
export async function writeAliases(
  db: Database,
  programId: number,
  namespace: PaymentNamespace,
  paymentId: string,
  aliases: readonly string[],
  saleId: number | null,
): Promise<void> {
  if (aliases.length === 0) return;
  const rows = aliases.map((alias) => ({ programId, namespace, alias, paymentId, saleId }));
  const t = paymentAliases;
  await db.execute(sql`
    ${paymentIdsInsert(rows)}
    on conflict (${columnName(t.namespace)}, ${columnName(t.alias)})
      do update set ${columnName(t.saleId)} = excluded.${columnName(t.saleId)}
    where ${t.saleId} is null and excluded.${columnName(t.saleId)} is not null`);
}

/**
 * After the events' sale `duplicate` was reversed as a copy of the sale endpoint's `keep`: when that reversal
 * took a commission away (a refund row of it carries `refundReason` and the commission) and `keep`, of the same
 * customer and partner, has none because the duplicate held the customer's one-time commission, `keep` is
 * flagged `needs_commission`, so the scheduled repair creates its commission (the sale endpoint's own fallback
 * path): the partner is paid once for the payment, not never. Guarded on that state, so a redelivery flags
 * nothing twice, and nothing once the repair ran or `keep` was refunded meanwhile.
 *
 * Only when the reversal is the duplicate's one refund: a payment partly refunded through the duplicate before
 * the two were known to be one (the refund endpoint finds an invoice sale by its invoice id) would otherwise get
 * its whole commission back from the repair, which knows nothing of that refund. Such a payment keeps no
 * commission: an underpayment left to a person (both sales and the refunds stay to read), never a payment made
 * twice.
 */
export async function flagKeptSaleForCommission(
  db: Database,
  programId: number,
  keep: AliasedSale,
  duplicate: AliasedSale,
  refundReason: string,
): Promise<boolean> {
  const k = saleEvents;
  const d = alias(saleEvents, "d");
  const c = alias(commissions, "c");
  const r = alias(refunds, "r");
  const result = await db.execute<{ id: unknown }>(sql`
    update ${k} set ${columnName(k.needsCommission)} = true
    where ${k.id} = ${keep.id}::bigint and ${k.programId} = ${programId}::int and ${k.source} = 'api'
      and not ${k.isTest} and not ${k.needsCommission} and ${k.partnerId} is not null and ${k.refundedCents} = 0
      and not exists (select 1 from ${commissions} ${c} where ${c.saleId} = ${k.id})
      and exists (
        select 1 from ${saleEvents} ${d}
        join ${refunds} ${r} on ${r.saleId} = ${d.id}
        where ${d.id} = ${duplicate.id}::bigint and ${d.source} = 'stripe'
          and ${d.customerId} = ${k.customerId} and ${d.partnerId} = ${k.partnerId}
          and ${r.commissionId} is not null and ${r.refundReason} = ${refundReason}::text
          and not exists (
            select 1 from ${refunds} where ${refunds.saleId} = ${d.id} and ${refunds.id} <> ${r.id}))
    returning ${k.id} as id`);
  return result.rows.length > 0;
}
