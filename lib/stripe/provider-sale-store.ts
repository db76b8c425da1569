import { type SQL, sql } from "drizzle-orm";
import { alias } from "drizzle-orm/pg-core";
import { customerProviderIds, customers } from "../../schema/customers.ts";
import { clickEvents, leadEvents, saleEvents } from "../../schema/events.ts";
import { programPartners } from "../../schema/partners.ts";
import { paymentAliases } from "../../schema/payment-aliases.ts";
import { commissionRules, programs } from "../../schema/programs.ts";
import type { Database } from "../db/client.ts";
import { fromDriver, fromDriverOrNull } from "../db/columns.ts";
import { textList } from "../db/sql-lists.ts";
import { otherProgramsOfWorkspace } from "../programs/other-programs-of-workspace.ts";
import type { PaymentNamespace } from "../sales/payment-namespace.ts";
import { customerColumns, customerFrom, saleCustomer } from "../tracking/sale/sale-store.ts";
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

const s = alias(saleEvents, "s");
const x = alias(saleEvents, "x");
const a = alias(paymentAliases, "a");
const c = saleCustomer;
const h = alias(customers, "h");
const k = alias(clickEvents, "k");
const o = alias(clickEvents, "o");
const l = alias(leadEvents, "l");
const pp2 = alias(programPartners, "pp2");
const p = alias(programs, "p");
const r = alias(commissionRules, "r");

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
  return sql`${s.id} in (
    select ${x.id} from ${saleEvents} ${x} where ${x.idNamespace} = ${ns} and ${x.processorEventId} in ${list}
    union all
    select ${x.id} from ${paymentAliases} ${a}
    join ${saleEvents} ${x} on ${x.idNamespace} = ${ns} and ${x.processorEventId} = ${a.alias}
    where ${a.namespace} = ${ns} and ${a.paymentId} in ${list} and ${a.saleId} is null
    union all
    select ${a.saleId} from ${paymentAliases} ${a}
    where ${a.namespace} = ${ns} and ${a.alias} in ${list} and ${a.saleId} is not null
    union all
    select ${a.saleId} from ${paymentAliases} ${a}
    where ${a.namespace} = ${ns} and ${a.paymentId} in ${list} and ${a.saleId} is not null)`;
}

/**
 * A click id (SQL expression) resolved to the visitor's original click, with its customer and its earliest
 * open provisional lead, as one JSON value (null when there is no such click).
 */
function clickCandidate(clickId: SQL): SQL {
  return sql`(select row_to_json(x) from (
    select coalesce(${o.clickId}, ${k.clickId}) as click_id, ${k.programId} as program_id,
           coalesce(${o.partnerId}, ${k.partnerId}) as partner_id,
           coalesce(${o.createdAt}, ${k.createdAt}) as created_at, ${k.isTest} as is_test,
           exists (select 1 from ${programPartners} ${pp2}
                   where ${pp2.programId} = ${k.programId} and ${pp2.partnerId} = coalesce(${o.partnerId}, ${k.partnerId})
                     and ${pp2.status} = 'active') as partner_is_member,
           (select row_to_json(cc) from (
              select ${customerColumns} from ${customers} ${c}
              where ${c.programId} = ${k.programId} and ${c.clickId} = coalesce(${o.clickId}, ${k.clickId})) cc)
             as customer,
           (select row_to_json(pl) from (
              select ${l.customerKey} as customer_key, ${l.emailHash} as email_hash,
                     ${l.emailMasked} as email_masked, ${l.createdAt} as created_at,
                     exists (select 1 from ${customers} ${h}
                             where ${h.programId} = ${l.programId} and ${h.customerKey} = ${l.customerKey}) as key_held
              from ${leadEvents} ${l}
              where ${l.programId} = ${k.programId} and ${l.clickId} = coalesce(${o.clickId}, ${k.clickId})
                and ${l.provisional} and ${l.settledAt} is null and not ${l.isTest}
              order by ${l.createdAt}, ${l.id} limit 1) pl) as provisional_lead
    from ${clickEvents} ${k}
    left join ${clickEvents} ${o} on ${o.clickId} = ${k.visitorClickId} and ${o.programId} = ${k.programId}
    where ${k.clickId} = ${clickId}) x)`;
}

/** The click of the earliest open provisional lead matching `condition` in the program. */
function provisionalLeadClick(programId: number, condition: SQL): SQL {
  return clickCandidate(sql`(
    select ${l.clickId} from ${leadEvents} ${l}
    where ${l.programId} = ${program(programId)} and ${condition}
      and ${l.provisional} and ${l.settledAt} is null and not ${l.isTest} and ${l.clickId} is not null
    order by ${l.createdAt}, ${l.id} limit 1)`);
}

/**
 * The customer of the program that a provider customer id is bound to (`customer_provider_ids`), else the
 * earliest customer whose own `provider_customer_id` holds it: a worker deployed before migration 0056 binds a
 * subscription checkout's id in that column only, and so did every write committed while its backfill ran.
 */
function customerOfProviderId(programId: number, providerCustomerId: string | null): SQL {
  const i = customerProviderIds;
  return sql`coalesce(
    (select ${i.customerId} from ${i}
     where ${i.programId} = ${program(programId)} and ${i.providerCustomerId} = ${providerCustomerId}::text),
    (select ${h.id} from ${customers} ${h}
     where ${h.programId} = ${program(programId)} and ${h.providerCustomerId} = ${providerCustomerId}::text
     order by ${h.id} limit 1))`;
}

function customerWhere(programId: number, condition: SQL): SQL {
  return sql`(select row_to_json(cc) from (
    select ${customerColumns} from ${customers} ${c}
    where ${c.programId} = ${program(programId)} and ${condition} and not ${c.isTest}
    order by ${c.id} limit 1) cc)`;
}

function clickFrom(value: unknown): ProviderClick | null {
  if (!value || typeof value !== "object") return null;
  const row = value as Row;
  const lead = row.provisional_lead as Row | null;
  return {
    clickId: fromDriver(k.clickId, row.click_id),
    programId: fromDriver(k.programId, row.program_id),
    partnerId: fromDriver(k.partnerId, row.partner_id),
    createdAt: fromDriver(k.createdAt, row.created_at),
    isTest: row.is_test === true,
    partnerIsMember: row.partner_is_member === true,
    customer: customerFrom((row.customer as Row | null) ?? undefined),
    provisionalLead: lead
      ? {
          customerKey: fromDriverOrNull(l.customerKey, lead.customer_key),
          email:
            lead.email_hash && lead.email_masked
              ? {
                  hash: fromDriver(l.emailHash, lead.email_hash),
                  masked: fromDriver(l.emailMasked, lead.email_masked),
                }
              : null,
          createdAt: fromDriver(l.createdAt, lead.created_at),
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
  const id = q.programId;
  const result = await db.execute(sql`
    select
      (select row_to_json(pr) from (
         select ${p.id} as id, ${p.attributionWindowDays} as attribution_window_days,
                ${p.commissionType} as commission_type, ${p.commissionRate}::text as commission_rate,
                ${p.durationMonths} as duration_months, ${p.holdDays} as hold_days,
                ${p.emailAttributionSettledOnly} as email_settled_only, ${r.id} as rule_id,
                ${r.commissionType} as rule_type, ${r.commissionRate}::text as rule_rate,
                ${r.durationMonths} as rule_duration
         from ${programs} ${p}
         left join ${commissionRules} ${r} on ${r.programId} = ${p.id} and ${r.productId} = ${q.productId}::text
         where ${p.id} = ${program(id)}) pr) as program,
      (select row_to_json(x) from (
         select ${s.id} as id, ${s.programId} as program_id, ${s.source} as source from ${saleEvents} ${s}
         where ${salesOfPaymentWhere(q.paymentIds, q.namespace)}
         order by ${s.id} limit 1) x)
        as existing_sale,
      ${clickCandidate(sql`${q.clickId}::text`)} as click,
      ${customerWhere(id, sql`${c.emailHash} = ${q.emailHash}::text`)} as customer_by_email,
      ${provisionalLeadClick(id, sql`${l.emailHash} = ${q.emailHash}::text`)} as email_lead_click,
      ${customerWhere(id, sql`${c.id} = ${customerOfProviderId(id, q.providerCustomerId)}`)} as customer_by_provider_id,
      ${clickCandidate(sql`${q.clientReferenceId}::text`)} as reference_click,
      ${customerWhere(id, sql`${c.customerKey} = ${q.customerKey}::text`)} as customer_by_key,
      ${provisionalLeadClick(id, sql`${l.customerKey} = ${q.customerKey}::text`)} as key_lead_click,
      (exists (select 1 from ${customers}
               where ${customers.customerKey} = ${q.customerKey}::text
                 and ${customers.programId} in (${otherProgramsOfWorkspace(id)}))
       or exists (select 1 from ${leadEvents}
                  where ${leadEvents.customerKey} = ${q.customerKey}::text
                    and ${leadEvents.programId} in (${otherProgramsOfWorkspace(id)})
                    and not ${leadEvents.isTest}))
        as key_elsewhere`);
  const row = result.rows[0];
  const programRow = row?.program as Row | null | undefined;
  if (!row || !programRow) throw new Error(`program ${id} was not read`);
  const sale = row.existing_sale as Row | null;
  return {
    program: {
      id: fromDriver(p.id, programRow.id),
      attributionWindowDays: fromDriver(p.attributionWindowDays, programRow.attribution_window_days),
      commissionType: fromDriver(p.commissionType, programRow.commission_type),
      commissionRate: fromDriver(p.commissionRate, programRow.commission_rate),
      durationMonths: fromDriver(p.durationMonths, programRow.duration_months),
      holdDays: fromDriver(p.holdDays, programRow.hold_days),
    },
    emailSettledLeadsOnly: fromDriver(p.emailAttributionSettledOnly, programRow.email_settled_only),
    productRule:
      programRow.rule_id != null
        ? {
            commissionType: fromDriver(r.commissionType, programRow.rule_type),
            commissionRate: fromDriver(r.commissionRate, programRow.rule_rate),
            durationMonths: fromDriverOrNull(r.durationMonths, programRow.rule_duration),
          }
        : null,
    existingSale: sale
      ? {
          id: fromDriver(s.id, sale.id),
          programId: fromDriver(s.programId, sale.program_id),
          source: fromDriver(s.source, sale.source),
        }
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
