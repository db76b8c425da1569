import { type SQL, sql } from "drizzle-orm";
import { paymentAliases } from "../../../schema/payment-aliases.ts";
import type { CommissionType } from "../../../schema/programs.ts";
import { apiKeyRecordFromRow, apiKeyRecordQuery } from "../../auth/program-key.ts";
import { commissionInsertStatements } from "../../commissions/credit.ts";
import type { Database } from "../../db/client.ts";
import { columnName } from "../../db/columns.ts";
import { textList } from "../../db/sql-lists.ts";
import { paymentIdsInsert } from "../../sales/payment-ids-insert.ts";
import { type PaymentNamespace, paymentNamespace } from "../../sales/payment-namespace.ts";
import { saleWebhooksStatement } from "../../webhooks/outbox-statements.ts";
import type { RecordedSale, SaleClick, SaleCustomer, SaleDecision, SaleFacts } from "./decide-sale.ts";

type Row = Record<string, unknown>;
type Recorded = Extract<SaleDecision, { outcome: "record" }>;

const date = (value: unknown): Date | null =>
  value === null || value === undefined ? null : new Date(String(value));

/** The columns `customerFrom` reads, for any query that selects customers as `c`. */
export const customerColumns = sql`
  c.id, c.program_id, c.partner_id, c.click_id, c.clicked_at, c.signed_up_at, c.first_converted_at,
  c.first_commission_at,
  exists (select 1 from program_partners pp
          where pp.program_id = c.program_id and pp.partner_id = c.partner_id and pp.status = 'active')
    as partner_is_member`;

export function customerFrom(row: Row | undefined): SaleCustomer | null {
  if (!row) return null;
  return {
    id: Number(row.id),
    programId: Number(row.program_id),
    partnerId: row.partner_id === null ? null : Number(row.partner_id),
    clickId: (row.click_id as string | null) ?? null,
    clickedAt: date(row.clicked_at),
    signedUpAt: date(row.signed_up_at),
    firstConvertedAt: date(row.first_converted_at),
    firstCommissionAt: date(row.first_commission_at),
    partnerIsMember: row.partner_is_member === true,
  };
}

/**
 * Everything the sale rules need, in one round trip (one batch of reads). The duplicate check reads the
 * sales the id names in the live namespace and in the key's program's test namespace (the rules keep the
 * one of the sale's own namespace): under its own id, or as another id of the payment (a Checkout
 * Session id, a subscription invoice's PaymentIntent id, see `payment_aliases`).
 */
export async function readSaleFacts(
  db: Database,
  q: {
    keyHash: string | null;
    transactionId: string | null;
    customerKey: string | null;
    clickId: string | null;
    productId: string | null;
  },
): Promise<SaleFacts> {
  const keyProgram = sql`(select program_id from program_api_keys where key_hash = ${q.keyHash}::text and revoked_at is null)`;
  const [keyRows, programRows, saleRows, customerRows, clickRows] = await db.batch([
    db.execute(apiKeyRecordQuery(q.keyHash)),
    db.execute(sql`
      select p.id, p.attribution_window_days, p.commission_type, p.commission_rate, p.duration_months, p.hold_days,
             r.commission_type as rule_type, r.commission_rate as rule_rate, r.duration_months as rule_duration,
             r.id as rule_id
      from programs p
      left join commission_rules r on r.program_id = p.id and r.product_id = ${q.productId}::text
      where p.id = ${keyProgram}`),
    db.execute(sql`
      select s.id, s.program_id, s.id_namespace from affiliate_sale_events s
      where s.id in (
        select a.sale_id from payment_aliases a
        where a.namespace in ('live', 'test:' || ${keyProgram}) and a.alias = ${q.transactionId}::text
          and a.sale_id is not null
        union all
        select x.id from affiliate_sale_events x
        where x.id_namespace in ('live', 'test:' || ${keyProgram}) and x.processor_event_id = ${q.transactionId}::text)`),
    db.execute(sql`
      select ${customerColumns} from customers c
      where c.customer_key = ${q.customerKey}::text and c.program_id = ${keyProgram}`),
    db.execute(sql`
      select coalesce(o.click_id, k.click_id) as click_id, coalesce(o.program_id, k.program_id) as program_id,
             coalesce(o.partner_id, k.partner_id) as partner_id, coalesce(o.created_at, k.created_at) as created_at,
             k.is_test,
             exists (select 1 from program_partners pp
                     where pp.program_id = coalesce(o.program_id, k.program_id)
                       and pp.partner_id = coalesce(o.partner_id, k.partner_id) and pp.status = 'active')
               as partner_is_member,
             (select row_to_json(cc) from (
                select ${customerColumns} from customers c
                where c.program_id = coalesce(o.program_id, k.program_id)
                  and c.click_id = coalesce(o.click_id, k.click_id)) cc) as customer
      from affiliate_click_events k
      left join affiliate_click_events o on o.click_id = k.visitor_click_id
      where k.click_id = ${q.clickId}::text`),
  ]);
  const programRow = programRows.rows[0];
  const clickRow = clickRows.rows[0];
  const click: SaleClick | null = clickRow
    ? {
        clickId: String(clickRow.click_id),
        programId: Number(clickRow.program_id),
        partnerId: Number(clickRow.partner_id),
        createdAt: new Date(String(clickRow.created_at)),
        isTest: clickRow.is_test === true,
        partnerIsMember: clickRow.partner_is_member === true,
        customer: customerFrom((clickRow.customer as Row | null) ?? undefined),
      }
    : null;
  return {
    key: apiKeyRecordFromRow(keyRows.rows[0] as Parameters<typeof apiKeyRecordFromRow>[0]),
    program: programRow
      ? {
          id: Number(programRow.id),
          attributionWindowDays: Number(programRow.attribution_window_days),
          commissionType: programRow.commission_type as CommissionType,
          commissionRate: String(programRow.commission_rate),
          durationMonths: Number(programRow.duration_months),
          holdDays: Number(programRow.hold_days),
        }
      : null,
    productRule:
      programRow?.rule_id != null
        ? {
            commissionType: programRow.rule_type as CommissionType,
            commissionRate: String(programRow.rule_rate),
            durationMonths: programRow.rule_duration === null ? null : Number(programRow.rule_duration),
          }
        : null,
    recordedSales: saleRows.rows.map(
      (r): RecordedSale => ({
        id: Number(r.id),
        programId: Number(r.program_id),
        namespace: String(r.id_namespace) as PaymentNamespace,
      }),
    ),
    customerByKey: customerFrom(customerRows.rows[0]),
    click,
  };
}

function customerIdExpression(decision: Recorded): SQL {
  const c = decision.customer;
  if (c.kind === "none") return sql`null::bigint`;
  if (c.kind === "update") return sql`${c.id}::bigint`;
  return sql`(select id from customers where program_id = ${c.programId}::int and click_id = ${c.clickId}::text)`;
}

function customerStatement(decision: Recorded, now: string): SQL | null {
  const c = decision.customer;
  const firstCommissionAt = decision.commission ? now : null;
  if (c.kind === "create") {
    const signedUpAt = c.signedUpAt?.toISOString() ?? null;
    return sql`
      with created as (
        insert into customers (program_id, partner_id, click_id, clicked_at, status, customer_key, email_hash,
                               email_masked, provider_customer_id, signed_up_at, first_converted_at,
                               first_commission_at, created_at, updated_at)
        values (${c.programId}::int, ${c.partnerId}::int, ${c.clickId}, ${c.clickedAt.toISOString()}::timestamptz,
                'converted', ${c.customerKey ?? null}::text, ${c.email?.hash ?? null}::text,
                ${c.email?.masked ?? null}::text, ${c.providerCustomerId ?? null}::text,
                ${signedUpAt}::timestamptz, ${now}::timestamptz, ${firstCommissionAt}::timestamptz,
                ${now}::timestamptz, ${now}::timestamptz)
        on conflict do nothing
        returning id)
      select guard(exists (select 1 from created), 'customer created meanwhile')`;
  }
  if (c.kind === "update") {
    // Guarded on what the rules saw: a concurrent sale that paid the first commission meanwhile aborts
    // this batch, and the retry re-decides (a one-time commission is then not paid twice). Compared at the
    // millisecond precision the rules read it with.
    const expected = c.expectedFirstCommissionAt?.toISOString() ?? null;
    return sql`
      with updated as (
        update customers
        set status = 'converted',
            first_converted_at = coalesce(first_converted_at, ${now}::timestamptz),
            first_commission_at = coalesce(first_commission_at, ${firstCommissionAt}::timestamptz),
            provider_customer_id = coalesce(provider_customer_id, ${c.providerCustomerId ?? null}::text),
            email_hash = coalesce(email_hash, ${c.email?.hash ?? null}::text),
            email_masked = case when email_hash is null then ${c.email?.masked ?? null}::text else email_masked end,
            updated_at = ${now}::timestamptz
        where id = ${c.id}::bigint
          and date_trunc('milliseconds', first_commission_at) is not distinct from ${expected}::timestamptz
        returning id)
      select guard(exists (select 1 from updated), 'customer changed meanwhile')`;
  }
  return null;
}

/** A payment settles the open provisional leads of the customer's click (spec section 3, Lead). */
function settleProvisionalStatement(decision: Recorded, now: string): SQL | null {
  const c = decision.customer;
  if (c.kind === "none" || !c.settleProvisionalOf) return null;
  const { programId, clickId } = c.settleProvisionalOf;
  return sql`
    update affiliate_lead_events
    set settled_at = ${now}::timestamptz, customer_id = ${customerIdExpression(decision)}
    where program_id = ${programId}::int and click_id = ${clickId}::text
      and provisional and settled_at is null and not is_test`;
}

function saleInsert(decision: Recorded, now: string, needsCommission: boolean): SQL {
  const s = decision.sale;
  return sql`
    insert into affiliate_sale_events
      (processor_event_id, program_id, customer_id, partner_id, amount_cents, tax_cents, currency, sale_type,
       line_items, is_recurring, subscription_id, subscription_interval, product_id, occurred_at, provider,
       provider_payment_id, livemode, source, needs_commission, is_test, created_at)
    values
      (${s.processorEventId}, ${s.programId}::int, ${customerIdExpression(decision)}, ${s.partnerId}::int,
       ${s.amountCents}::bigint, ${s.taxCents}::bigint, ${s.currency}, ${s.saleType},
       ${s.lineItems === null ? null : JSON.stringify(s.lineItems)}::jsonb, ${s.isRecurring}::boolean,
       ${s.subscriptionId}::text, ${s.subscriptionInterval}::text, ${s.productId}::text,
       ${s.occurredAt?.toISOString() ?? null}::timestamptz, ${s.provider}::text, ${s.providerPaymentId}::text,
       ${s.livemode}::boolean, ${s.source}, ${needsCommission}::boolean, ${s.isTest}::boolean, ${now}::timestamptz)`;
}

function commissionStatements(decision: Recorded, now: Date): SQL[] {
  return decision.commission ? commissionInsertStatements(decision.commission, saleKey(decision), now) : [];
}

function namespaceOf(decision: Recorded): PaymentNamespace {
  return paymentNamespace(decision.sale.isTest, decision.sale.programId);
}

/** The decided sale's row, by its id in its namespace (for `affiliate_sale_events s`). */
function saleKey(decision: Recorded): SQL {
  return sql`s.processor_event_id = ${decision.sale.processorEventId}::text and s.id_namespace = ${namespaceOf(decision)}::text`;
}

/**
 * Every id of the payment into the one ids index, not linked yet, FIRST in the transaction: a concurrent
 * writer of one of these ids (a sale, or a provider alias) waits here for the other to commit and then
 * fails the guard below. An id already there (an alias kept unlinked) is left as it is, and linked below.
 */
function idsInsert(decision: Recorded, ids: readonly string[]): SQL {
  const ns = namespaceOf(decision);
  const rows = ids.map((alias) => ({
    programId: decision.sale.programId,
    namespace: ns,
    alias,
    paymentId: decision.sale.processorEventId,
    saleId: null,
  }));
  const t = paymentAliases;
  return sql`
    ${paymentIdsInsert(rows)}
    on conflict (${columnName(t.namespace)}, ${columnName(t.alias)}) do nothing`;
}

/**
 * None of the payment's ids may already name a recorded sale (read before, but one may have been written
 * since): the batch aborts and the retry's read answers the duplicate.
 */
function idsGuard(decision: Recorded, ids: readonly string[]): SQL {
  return sql`
    select guard(not exists (select 1 from payment_aliases
                             where namespace = ${namespaceOf(decision)}::text
                               and (alias in ${textList(ids)} or payment_id in ${textList(ids)})
                               and sale_id is not null), 'payment recorded meanwhile')`;
}

/** The payment's ids (and aliases recorded unlinked before this sale existed) now point to it. */
function linkIdsStatement(decision: Recorded, ids: readonly string[]): SQL {
  return sql`
    update payment_aliases
    set sale_id = (select s.id from affiliate_sale_events s where ${saleKey(decision)})
    where namespace = ${namespaceOf(decision)}::text
      and (alias in ${textList(ids)} or payment_id in ${textList(ids)}) and sale_id is null`;
}

/**
 * Writes the decided sale in ONE transaction (one round trip): the payment's ids (its own and `aliases`) in
 * the ids index, customer, sale, commission and, for an approved commission, its ledger credit and balance.
 * Returns the ids. `aliases`: the payment's other ids (the provider's invoice id of a sale keyed by its
 * PaymentIntent, a checkout's session id).
 */
export async function writeSale(
  db: Database,
  decision: Recorded,
  now: Date,
  options: { withCommission?: boolean; aliases?: readonly string[] } = {},
): Promise<{ saleId: number; commissionId: number | null }> {
  const at = now.toISOString();
  const withCommission = options.withCommission ?? true;
  const aliases = (options.aliases ?? []).filter((a) => a !== decision.sale.processorEventId);
  const paymentIds = [decision.sale.processorEventId, ...aliases];
  const needsCommission = !withCommission && decision.commission !== null;
  const statements: SQL[] = [
    idsInsert(decision, paymentIds),
    idsGuard(decision, paymentIds),
    ...[customerStatement(decision, at), settleProvisionalStatement(decision, at)].filter(
      (s): s is SQL => s !== null,
    ),
    saleInsert(decision, at, needsCommission),
    linkIdsStatement(decision, paymentIds),
    ...(withCommission ? commissionStatements(decision, now) : []),
    saleWebhooksStatement(saleKey(decision), at),
    sql`
      select s.id as sale_id, c.id as commission_id
      from affiliate_sale_events s left join commissions c on c.sale_id = s.id
      where ${saleKey(decision)}`,
  ];
  const results = await db.batch(
    statements.map((statement) => db.execute(statement)) as [ReturnType<Database["execute"]>],
  );
  const ids = results[results.length - 1]?.rows[0];
  if (!ids) throw new Error("sale write returned no ids");
  return {
    saleId: Number(ids.sale_id),
    commissionId: ids.commission_id === null ? null : Number(ids.commission_id),
  };
}
