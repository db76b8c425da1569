import { type SQL, sql } from "drizzle-orm";
import type { CommissionType } from "../../schema/programs.ts";
import type { Database } from "../db/client.ts";
import { textList } from "../db/sql-lists.ts";
import type { PaymentNamespace } from "../sales/payment-namespace.ts";
import { customerColumns, customerFrom } from "../tracking/sale/sale-store.ts";
import type { ProviderClick, ProviderSaleFacts } from "./decide-provider-sale.ts";

type Row = Record<string, unknown>;

export interface ProviderSaleQuery {
  programId: number;
  /** Every id the payment is known by (`paymentIdsOf`); empty for a subscription checkout. */
  paymentIds: string[];
  /** The namespace of those ids (`live`, or the program's test namespace for a test-mode event). */
  namespace: PaymentNamespace;
  productId: string | null;
  clickId: string | null;
  clientReferenceId: string | null;
  emailHash: string | null;
  providerCustomerId: string | null;
  customerKey: string | null;
}

const program = (programId: number) => sql`${programId}::int`;

/**
 * The sale already recorded for a payment known by `ids` in `namespace`, by either path: under one of the
 * ids, as the sale one of the ids (or an alias of them) points to in the ids index, or under an id an
 * `invoice_payment.paid` named for it before its sale existed (an unlinked alias). Selects `s.*` of
 * `affiliate_sale_events s`.
 */
export function salesOfPaymentWhere(ids: readonly string[], namespace: PaymentNamespace): SQL {
  const list = textList(ids);
  const ns = sql`${namespace}::text`;
  // One `in` over a union, not `or`ed conditions: PostgreSQL plans an `or` of subqueries as a walk of
  // the whole sales table; each branch here is an index lookup.
  return sql`s.id in (
    select x.id from affiliate_sale_events x where x.id_namespace = ${ns} and x.processor_event_id in ${list}
    union all
    select x.id from payment_aliases a
    join affiliate_sale_events x on x.id_namespace = ${ns} and x.processor_event_id = a.alias
    where a.namespace = ${ns} and a.payment_id in ${list} and a.sale_id is null
    union all
    select a.sale_id from payment_aliases a where a.namespace = ${ns} and a.alias in ${list} and a.sale_id is not null
    union all
    select a.sale_id from payment_aliases a
    where a.namespace = ${ns} and a.payment_id in ${list} and a.sale_id is not null)`;
}

/**
 * A click id (SQL expression) resolved to the visitor's original click, with its customer and its earliest
 * open provisional lead, as one JSON value (null when there is no such click).
 */
function clickCandidate(clickId: SQL): SQL {
  return sql`(select row_to_json(x) from (
    select coalesce(o.click_id, k.click_id) as click_id, k.program_id,
           coalesce(o.partner_id, k.partner_id) as partner_id, coalesce(o.created_at, k.created_at) as created_at,
           k.is_test,
           exists (select 1 from program_partners pp2
                   where pp2.program_id = k.program_id and pp2.partner_id = coalesce(o.partner_id, k.partner_id)
                     and pp2.status = 'active') as partner_is_member,
           (select row_to_json(cc) from (
              select ${customerColumns} from customers c
              where c.program_id = k.program_id and c.click_id = coalesce(o.click_id, k.click_id)) cc) as customer,
           (select row_to_json(pl) from (
              select l.customer_key, l.email_hash, l.email_masked, l.created_at,
                     exists (select 1 from customers h
                             where h.program_id = l.program_id and h.customer_key = l.customer_key) as key_held
              from affiliate_lead_events l
              where l.program_id = k.program_id and l.click_id = coalesce(o.click_id, k.click_id)
                and l.provisional and l.settled_at is null and not l.is_test
              order by l.created_at, l.id limit 1) pl) as provisional_lead
    from affiliate_click_events k
    left join affiliate_click_events o on o.click_id = k.visitor_click_id and o.program_id = k.program_id
    where k.click_id = ${clickId}) x)`;
}

/** The click of the earliest open provisional lead matching `condition` in the program. */
function provisionalLeadClick(programId: number, condition: SQL): SQL {
  return clickCandidate(sql`(
    select l.click_id from affiliate_lead_events l
    where l.program_id = ${program(programId)} and ${condition}
      and l.provisional and l.settled_at is null and not l.is_test and l.click_id is not null
    order by l.created_at, l.id limit 1)`);
}

function customerWhere(programId: number, condition: SQL): SQL {
  return sql`(select row_to_json(cc) from (
    select ${customerColumns} from customers c
    where c.program_id = ${program(programId)} and ${condition} and not c.is_test
    order by c.id limit 1) cc)`;
}

function clickFrom(value: unknown): ProviderClick | null {
  if (!value || typeof value !== "object") return null;
  const r = value as Row;
  const lead = r.provisional_lead as Row | null;
  return {
    clickId: String(r.click_id),
    programId: Number(r.program_id),
    partnerId: Number(r.partner_id),
    createdAt: new Date(String(r.created_at)),
    isTest: r.is_test === true,
    partnerIsMember: r.partner_is_member === true,
    customer: customerFrom((r.customer as Row | null) ?? undefined),
    provisionalLead: lead
      ? {
          customerKey: (lead.customer_key as string | null) ?? null,
          email:
            lead.email_hash && lead.email_masked
              ? { hash: String(lead.email_hash), masked: String(lead.email_masked) }
              : null,
          createdAt: new Date(String(lead.created_at)),
          keyHeld: lead.key_held === true,
        }
      : null,
  };
}

/**
 * Every fact the attribution of one payment needs, in ONE statement (one round trip): the program's terms,
 * a sale already recorded under the payment id (by either path), and a candidate for each attribution
 * step. Nothing is written here.
 */
export async function readProviderSaleFacts(db: Database, q: ProviderSaleQuery): Promise<ProviderSaleFacts> {
  const p = q.programId;
  const result = await db.execute(sql`
    select
      (select row_to_json(pr) from (
         select p.id, p.attribution_window_days, p.commission_type, p.commission_rate::text, p.duration_months,
                p.hold_days, r.id as rule_id, r.commission_type as rule_type, r.commission_rate::text as rule_rate,
                r.duration_months as rule_duration
         from programs p
         left join commission_rules r on r.program_id = p.id and r.product_id = ${q.productId}::text
         where p.id = ${program(p)}) pr) as program,
      (select row_to_json(x) from (
         select s.id, s.program_id, s.source from affiliate_sale_events s
         where ${salesOfPaymentWhere(q.paymentIds, q.namespace)}
         order by s.id limit 1) x)
        as existing_sale,
      ${clickCandidate(sql`${q.clickId}::text`)} as click,
      ${customerWhere(p, sql`c.email_hash = ${q.emailHash}::text`)} as customer_by_email,
      ${provisionalLeadClick(p, sql`l.email_hash = ${q.emailHash}::text`)} as email_lead_click,
      ${customerWhere(p, sql`c.provider_customer_id = ${q.providerCustomerId}::text`)} as customer_by_provider_id,
      ${clickCandidate(sql`${q.clientReferenceId}::text`)} as reference_click,
      ${customerWhere(p, sql`c.customer_key = ${q.customerKey}::text`)} as customer_by_key,
      ${provisionalLeadClick(p, sql`l.customer_key = ${q.customerKey}::text`)} as key_lead_click,
      (exists (select 1 from customers where customer_key = ${q.customerKey}::text and program_id <> ${program(p)})
       or exists (select 1 from affiliate_lead_events
                  where customer_key = ${q.customerKey}::text and program_id <> ${program(p)} and not is_test))
        as key_elsewhere`);
  const row = result.rows[0];
  const programRow = row?.program as Row | null | undefined;
  if (!row || !programRow) throw new Error(`program ${p} was not read`);
  const sale = row.existing_sale as Row | null;
  return {
    program: {
      id: Number(programRow.id),
      attributionWindowDays: Number(programRow.attribution_window_days),
      commissionType: programRow.commission_type as CommissionType,
      commissionRate: String(programRow.commission_rate),
      durationMonths: Number(programRow.duration_months),
      holdDays: Number(programRow.hold_days),
    },
    productRule:
      programRow.rule_id != null
        ? {
            commissionType: programRow.rule_type as CommissionType,
            commissionRate: String(programRow.rule_rate),
            durationMonths: programRow.rule_duration === null ? null : Number(programRow.rule_duration),
          }
        : null,
    existingSale: sale
      ? { id: Number(sale.id), programId: Number(sale.program_id), source: String(sale.source) }
      : null,
    click: clickFrom(row.click),
    customerByEmail: customerFrom((row.customer_by_email as Row | null) ?? undefined),
    emailLeadClick: clickFrom(row.email_lead_click),
    customerByProviderId: customerFrom((row.customer_by_provider_id as Row | null) ?? undefined),
    referenceClick: clickFrom(row.reference_click),
    customerByKey: customerFrom((row.customer_by_key as Row | null) ?? undefined),
    keyLeadClick: clickFrom(row.key_lead_click),
    keyElsewhere: row.key_elsewhere === true,
  };
}
