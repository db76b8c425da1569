import { type Placeholder, type SQL, sql } from "drizzle-orm";
import { alias } from "drizzle-orm/pg-core";
import { commissions } from "../../../schema/commissions.ts";
import { customerProviderIds, customers } from "../../../schema/customers.ts";
import { clickEvents, saleEvents } from "../../../schema/events.ts";
import { programPartners } from "../../../schema/partners.ts";
import { paymentAliases } from "../../../schema/payment-aliases.ts";
import { commissionRules, programApiKeys, programs } from "../../../schema/programs.ts";
import { apiKeyRecordFromRow, apiKeyRecordQuery } from "../../auth/program-key.ts";
import {
  commissionInsert,
  commissionOfSale,
  commissionValues,
  creditCommissionStatement,
} from "../../commissions/credit.ts";
import type { Database } from "../../db/client.ts";
import { columnList, columnName, fromDriver, fromDriverOrNull } from "../../db/columns.ts";
import { groupCommittedStatement, type Sending } from "../../db/group-committed-statement.ts";
import { groupCommittedWrite } from "../../db/group-committed-write.ts";
import { keptPlanStatement } from "../../db/kept-plan.ts";
import { keptPlanSequence } from "../../db/kept-plan-sequence.ts";
import { wellFormedJson } from "../../db/well-formed-json.ts";
import { type PaymentNamespace, paymentNamespace } from "../../sales/payment-namespace.ts";
import { saleWebhooksStatement } from "../../webhooks/outbox-statements.ts";
import { customerByClick } from "../customer-by-click.ts";
import { provisionalLeadsSettle } from "../settle-provisional-leads.ts";
import type { RecordedSale, SaleClick, SaleCustomer, SaleDecision, SaleFacts } from "./decide-sale.ts";

type Row = Record<string, unknown>;
type Recorded = Extract<SaleDecision, { outcome: "record" }>;

/** Customers as `c`: `from ${customers} ${saleCustomer}` for `customerColumns`. */
export const saleCustomer = alias(customers, "c");
const c = saleCustomer;
const pp = alias(programPartners, "pp");

/**
 * The columns `customerFrom` reads, for any query that selects customers as `saleCustomer` (`c`): whether the row
 * holds a provider customer id and an email too, which a returning customer's sale then need not write (0050).
 */
export const customerColumns = sql`
  ${c.id} as id, ${c.programId} as program_id, ${c.partnerId} as partner_id, ${c.clickId} as click_id,
  ${c.clickedAt} as clicked_at, ${c.signedUpAt} as signed_up_at, ${c.firstConvertedAt} as first_converted_at,
  ${c.firstCommissionAt} as first_commission_at,
  ${c.providerCustomerId} is not null as has_provider_customer_id, ${c.emailHash} is not null as has_email,
  exists (select 1 from ${programPartners} ${pp}
          where ${pp.programId} = ${c.programId} and ${pp.partnerId} = ${c.partnerId} and ${pp.status} = 'active')
    as partner_is_member`;

export function customerFrom(row: Row | undefined): SaleCustomer | null {
  if (!row) return null;
  return {
    id: fromDriver(c.id, row.id),
    programId: fromDriver(c.programId, row.program_id),
    partnerId: fromDriverOrNull(c.partnerId, row.partner_id),
    clickId: fromDriverOrNull(c.clickId, row.click_id),
    clickedAt: fromDriverOrNull(c.clickedAt, row.clicked_at),
    signedUpAt: fromDriverOrNull(c.signedUpAt, row.signed_up_at),
    firstConvertedAt: fromDriverOrNull(c.firstConvertedAt, row.first_converted_at),
    firstCommissionAt: fromDriverOrNull(c.firstCommissionAt, row.first_commission_at),
    hasProviderCustomerId: row.has_provider_customer_id === true,
    hasEmail: row.has_email === true,
    partnerIsMember: row.partner_is_member === true,
  };
}

/** The key's program (`keyHash`) as `p`, with the commission rule of the sale's product as `r`. */
const p = alias(programs, "p");
const r = alias(commissionRules, "r");
/** The clicked click as `k`, and the visitor's original click as `o`. */
const k = alias(clickEvents, "k");
const o = alias(clickEvents, "o");

/** The program of the key whose hash is given (revoked keys name none), as a scalar subquery. */
export function keyProgram(keyHash: Placeholder): SQL {
  const ak = programApiKeys;
  return sql`(select ${ak.programId} from ${ak} where ${ak.keyHash} = ${keyHash}::text and ${ak.revokedAt} is null)`;
}

/** The key's program and, as `rule_*`, its commission rule for the sale's product. */
function saleProgramQuery(q: { keyHash: Placeholder; productId: Placeholder }): SQL {
  // The rates as text, as the driver reads a numeric column: inside JSON they would be numbers.
  return sql`
      select ${p.id} as id, ${p.attributionWindowDays} as attribution_window_days,
             ${p.commissionType} as commission_type, ${p.commissionRate}::text as commission_rate,
             ${p.durationMonths} as duration_months, ${p.holdDays} as hold_days,
             ${r.commissionType} as rule_type, ${r.commissionRate}::text as rule_rate,
             ${r.durationMonths} as rule_duration, ${r.id} as rule_id
      from ${programs} ${p}
      left join ${commissionRules} ${r} on ${r.programId} = ${p.id} and ${r.productId} = ${q.productId}::text
      where ${p.id} = ${keyProgram(q.keyHash)}`;
}

/** The sales the id already names, in the live namespace and in the key's program's test namespace. */
function recordedSalesQuery(q: { keyHash: Placeholder; transactionId: Placeholder }): SQL {
  const s = alias(saleEvents, "s");
  const x = alias(saleEvents, "x");
  const a = alias(paymentAliases, "a");
  return sql`
      select ${s.id} as id, ${s.programId} as program_id, ${s.idNamespace} as id_namespace
      from ${saleEvents} ${s}
      where ${s.id} in (
        select ${a.saleId} from ${paymentAliases} ${a}
        where ${a.namespace} in ('live', 'test:' || ${keyProgram(q.keyHash)}) and ${a.alias} = ${q.transactionId}::text
          and ${a.saleId} is not null
        union all
        select ${x.id} from ${saleEvents} ${x}
        where ${x.idNamespace} in ('live', 'test:' || ${keyProgram(q.keyHash)}) and ${x.processorEventId} = ${q.transactionId}::text)`;
}

/** The customer of the key's program holding `customer_key`. */
function customerByKeyQuery(q: { keyHash: Placeholder; customerKey: Placeholder }): SQL {
  return sql`
      select ${customerColumns} from ${customers} ${c}
      where ${c.customerKey} = ${q.customerKey}::text and ${c.programId} = ${keyProgram(q.keyHash)}`;
}

/** The click resolved to the visitor's original click, its partner's membership and its customer. */
function saleClickQuery(q: { clickId: Placeholder }): SQL {
  return sql`
      select coalesce(${o.clickId}, ${k.clickId}) as click_id, coalesce(${o.programId}, ${k.programId}) as program_id,
             coalesce(${o.partnerId}, ${k.partnerId}) as partner_id,
             coalesce(${o.createdAt}, ${k.createdAt}) as created_at, ${k.isTest} as is_test,
             exists (select 1 from ${programPartners} ${pp}
                     where ${pp.programId} = coalesce(${o.programId}, ${k.programId})
                       and ${pp.partnerId} = coalesce(${o.partnerId}, ${k.partnerId}) and ${pp.status} = 'active')
               as partner_is_member,
             (select row_to_json(cc) from (
                select ${customerColumns} from ${customers} ${c}
                where ${c.programId} = coalesce(${o.programId}, ${k.programId})
                  and ${c.clickId} = coalesce(${o.clickId}, ${k.clickId})) cc) as customer
      from ${clickEvents} ${k}
      left join ${clickEvents} ${o} on ${o.clickId} = ${k.visitorClickId}
      where ${k.clickId} = ${q.clickId}::text`;
}

/**
 * The sale read in ONE statement, each part as JSON (at most one row each but the recorded sales; `limit 1`
 * keeps the first, as reading the first row did), run as the PL/pgSQL function `read_sale_facts`
 * (`keptPlanStatement`, migrations 0034 and 0050): planned once per connection, and one statement where the
 * batch sent five, each costing the database, the SQL endpoint and the worker its own round of handling.
 */
export const saleFactsStatement = keptPlanStatement({
  functionName: "read_sale_facts",
  names: ["keyHash", "transactionId", "customerKey", "clickId", "productId"],
  parameterTypes: {
    keyHash: "text",
    transactionId: "text",
    customerKey: "text",
    clickId: "text",
    productId: "text",
  },
  returns: [
    ["key", "json"],
    ["program", "json"],
    ["recorded_sales", "json"],
    ["customer_by_key", "json"],
    ["click", "json"],
  ],
  build: (q) => sql`
    select
      (select row_to_json(part) from (${apiKeyRecordQuery(q.keyHash)}) part) as key,
      (select row_to_json(part) from (${saleProgramQuery(q)} limit 1) part) as program,
      (select coalesce(json_agg(part), '[]'::json) from (${recordedSalesQuery(q)}) part) as recorded_sales,
      (select row_to_json(part) from (${customerByKeyQuery(q)} limit 1) part) as customer_by_key,
      (select row_to_json(part) from (${saleClickQuery(q)} limit 1) part) as click`,
});

export type SaleFactsRow = {
  key: Parameters<typeof apiKeyRecordFromRow>[0] | null;
  program: Row | null;
  recorded_sales: Row[];
  customer_by_key: Row | null;
  click: Row | null;
};

/** The sale's read through the isolate's group commit (`read_sale_facts_batch`, migrations 0045, 0052). */
export const saleReadSent = groupCommittedStatement<typeof saleFactsStatement.names, SaleFactsRow>({
  functionName: "read_sale_facts_batch",
  statement: saleFactsStatement,
  what: "sale read",
  inlined: true,
});

/**
 * Everything the sale rules need, in one round trip (one statement). The duplicate check reads the
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
  sending?: Sending,
): Promise<SaleFacts> {
  return saleFactsFromRow(await saleReadSent.send(db, q, sending));
}

/** The facts of the sale's read (or of the sale decided at once, `sale-at-once.ts`) as the rules read them. */
export function saleFactsFromRow(facts: SaleFactsRow): SaleFacts {
  const programRow = facts.program;
  const clickRow = facts.click;
  const click: SaleClick | null = clickRow
    ? {
        clickId: fromDriver(k.clickId, clickRow.click_id),
        programId: fromDriver(k.programId, clickRow.program_id),
        partnerId: fromDriver(k.partnerId, clickRow.partner_id),
        createdAt: fromDriver(k.createdAt, clickRow.created_at),
        isTest: clickRow.is_test === true,
        partnerIsMember: clickRow.partner_is_member === true,
        customer: customerFrom((clickRow.customer as Row | null) ?? undefined),
      }
    : null;
  return {
    key: apiKeyRecordFromRow(facts.key ?? undefined),
    program: programRow
      ? {
          id: fromDriver(p.id, programRow.id),
          attributionWindowDays: fromDriver(p.attributionWindowDays, programRow.attribution_window_days),
          commissionType: fromDriver(p.commissionType, programRow.commission_type),
          commissionRate: fromDriver(p.commissionRate, programRow.commission_rate),
          durationMonths: fromDriver(p.durationMonths, programRow.duration_months),
          holdDays: fromDriver(p.holdDays, programRow.hold_days),
        }
      : null,
    productRule:
      programRow?.rule_id != null
        ? {
            commissionType: fromDriver(r.commissionType, programRow.rule_type),
            commissionRate: fromDriver(r.commissionRate, programRow.rule_rate),
            durationMonths: fromDriverOrNull(r.durationMonths, programRow.rule_duration),
          }
        : null,
    recordedSales: facts.recorded_sales.map(
      (row): RecordedSale => ({
        id: fromDriver(s.id, row.id),
        programId: fromDriver(s.programId, row.program_id),
        namespace: fromDriver(s.idNamespace, row.id_namespace) as PaymentNamespace,
      }),
    ),
    customerByKey: customerFrom(facts.customer_by_key ?? undefined),
    click,
  };
}

/**
 * A CTE (`linked`) that binds the provider customer id the payment came under to the customer a write
 * returned (`rows`: `id`, `program_id`, `provider_customer_id`), unless a customer of the program holds it
 * already: every id a customer paid under finds it again (`customer_provider_ids`, migration 0056).
 */
export function linkProviderCustomerId(rows: SQL): SQL {
  const i = customerProviderIds;
  return sql`linked as (
        insert into ${i} (${columnList(i.programId, i.providerCustomerId, i.customerId)})
        select program_id, provider_customer_id, id from ${rows} where provider_customer_id is not null
        on conflict do nothing)`;
}

// The sale's customer, created from its click or converted, each run as a PL/pgSQL function
// (`keptPlanStatement`, migration 0037): planned once per connection instead of on every sale.
export const customerWrites = {
  create: keptPlanStatement({
    functionName: "create_converted_customer",
    names: [
      "programId",
      "partnerId",
      "clickId",
      "clickedAt",
      "customerKey",
      "emailHash",
      "emailMasked",
      "providerCustomerId",
      "signedUpAt",
      "firstCommissionAt",
      "now",
    ],
    parameterTypes: {
      programId: "integer",
      partnerId: "integer",
      clickId: "text",
      clickedAt: "timestamp with time zone",
      customerKey: "text",
      emailHash: "text",
      emailMasked: "text",
      providerCustomerId: "text",
      signedUpAt: "timestamp with time zone",
      firstCommissionAt: "timestamp with time zone",
      now: "timestamp with time zone",
    },
    returns: [["created", "boolean"]],
    build: (v) => {
      const t = customers;
      return sql`
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
          t.firstConvertedAt,
          t.firstCommissionAt,
          t.createdAt,
          t.updatedAt,
        )})
        values (${v.programId}::int, ${v.partnerId}::int, ${v.clickId}::text, ${v.clickedAt}::timestamptz,
                'converted', ${v.customerKey}::text, ${v.emailHash}::text, ${v.emailMasked}::text,
                ${v.providerCustomerId}::text, ${v.signedUpAt}::timestamptz, ${v.now}::timestamptz,
                ${v.firstCommissionAt}::timestamptz, ${v.now}::timestamptz, ${v.now}::timestamptz)
        on conflict do nothing
        returning ${t.id}, ${t.programId}, ${t.providerCustomerId}),
      ${linkProviderCustomerId(sql`created`)}
      select guard(exists (select 1 from created), 'customer created meanwhile') as created`;
    },
  }),
  update: keptPlanStatement({
    functionName: "convert_customer",
    names: [
      "id",
      "expectedFirstCommissionAt",
      "firstCommissionAt",
      "providerCustomerId",
      "emailHash",
      "emailMasked",
      "now",
    ],
    parameterTypes: {
      id: "bigint",
      expectedFirstCommissionAt: "timestamp with time zone",
      firstCommissionAt: "timestamp with time zone",
      providerCustomerId: "text",
      emailHash: "text",
      emailMasked: "text",
      now: "timestamp with time zone",
    },
    returns: [["converted", "boolean"]],
    // Guarded on what the rules saw: a concurrent sale that paid the first commission meanwhile aborts
    // this batch, and the retry re-decides (a one-time commission is then not paid twice). Compared at the
    // millisecond precision the rules read it with.
    build: (v) => {
      const t = customers;
      return sql`
      with updated as (
        update ${t}
        set ${columnName(t.status)} = 'converted',
            ${columnName(t.firstConvertedAt)} = coalesce(${t.firstConvertedAt}, ${v.now}::timestamptz),
            ${columnName(t.firstCommissionAt)} = coalesce(${t.firstCommissionAt}, ${v.firstCommissionAt}::timestamptz),
            ${columnName(t.providerCustomerId)} = coalesce(${t.providerCustomerId}, ${v.providerCustomerId}::text),
            ${columnName(t.emailHash)} = coalesce(${t.emailHash}, ${v.emailHash}::text),
            ${columnName(t.emailMasked)} =
              case when ${t.emailHash} is null then ${v.emailMasked}::text else ${t.emailMasked} end,
            ${columnName(t.updatedAt)} = ${v.now}::timestamptz
        where ${t.id} = ${v.id}::bigint
          and date_trunc('milliseconds', ${t.firstCommissionAt}) is not distinct from ${v.expectedFirstCommissionAt}::timestamptz
        returning ${t.id}, ${t.programId}, ${v.providerCustomerId}::text as provider_customer_id),
      ${linkProviderCustomerId(sql`updated`)}
      select guard(exists (select 1 from updated), 'customer changed meanwhile') as converted`;
    },
  }),
};

/** The customer's step of the sale write: created from its click, converted, or none (no customer, or unchanged). */
function customerStep(decision: Recorded, now: string): SaleWriteSteps {
  const c = decision.customer;
  if (c.kind === "none" || (c.kind === "update" && c.unchanged)) return {};
  const common = {
    emailHash: c.email?.hash ?? null,
    emailMasked: c.email?.masked ?? null,
    providerCustomerId: c.providerCustomerId ?? null,
    firstCommissionAt: decision.commission ? now : null,
    now,
  };
  if (c.kind === "create") {
    return {
      customerCreate: {
        ...common,
        programId: c.programId,
        partnerId: c.partnerId,
        clickId: c.clickId,
        clickedAt: c.clickedAt.toISOString(),
        customerKey: c.customerKey ?? null,
        signedUpAt: c.signedUpAt?.toISOString() ?? null,
      },
    };
  }
  return {
    customerUpdate: {
      ...common,
      id: c.id,
      expectedFirstCommissionAt: c.expectedFirstCommissionAt?.toISOString() ?? null,
    },
  };
}

/** A payment settles the open provisional leads of the customer's click (spec section 3, Lead). */
function settleStep(decision: Recorded, now: string): SaleWriteSteps {
  const c = decision.customer;
  if (c.kind === "none" || !c.settleProvisionalOf) return {};
  const { programId, clickId } = c.settleProvisionalOf;
  const customer =
    c.kind === "update"
      ? { customerId: c.id, customerProgramId: null, customerClickId: null }
      : { customerId: null, customerProgramId: c.programId, customerClickId: c.clickId };
  return { settle: { programId, clickId, settledAt: now, ...customer } };
}

/** The sale insert's values, in the order of its columns (the customer's id aside). */
export const SALE_VALUES = [
  "processorEventId",
  "programId",
  "partnerId",
  "amountCents",
  "taxCents",
  "currency",
  "saleType",
  "lineItems",
  "isRecurring",
  "subscriptionId",
  "subscriptionInterval",
  "productId",
  "occurredAt",
  "provider",
  "providerPaymentId",
  "livemode",
  "source",
  "needsCommission",
  "isTest",
  "now",
] as const;

/**
 * The sale's row and, in the same statement, its own id in the ids index already linked to it: written
 * once, where the claim wrote it unlinked and the link then rewrote it (every index of the row written twice,
 * migration 0049). An id already there (an alias kept unlinked, or a concurrent writer's, waited for) is left
 * to the link, whose guard then sees it.
 */
function saleInsertStatement(
  v: { [Name in (typeof SALE_VALUES)[number]]: Placeholder },
  customerId: SQL,
): SQL {
  const t = saleEvents;
  const ids = paymentAliases;
  return sql`
    with sale as (
    insert into ${t}
      (${columnList(
        t.processorEventId,
        t.programId,
        t.customerId,
        t.partnerId,
        t.amountCents,
        t.taxCents,
        t.currency,
        t.saleType,
        t.lineItems,
        t.isRecurring,
        t.subscriptionId,
        t.subscriptionInterval,
        t.productId,
        t.occurredAt,
        t.provider,
        t.providerPaymentId,
        t.livemode,
        t.source,
        t.needsCommission,
        t.isTest,
        t.createdAt,
      )})
    values
      (${v.processorEventId}, ${v.programId}::int, ${customerId}, ${v.partnerId}::int,
       ${v.amountCents}::bigint, ${v.taxCents}::bigint, ${v.currency}, ${v.saleType},
       ${v.lineItems}::jsonb, ${v.isRecurring}::boolean,
       ${v.subscriptionId}::text, ${v.subscriptionInterval}::text, ${v.productId}::text,
       ${v.occurredAt}::timestamptz, ${v.provider}::text, ${v.providerPaymentId}::text,
       ${v.livemode}::boolean, ${v.source}, ${v.needsCommission}::boolean, ${v.isTest}::boolean, ${v.now}::timestamptz)
      returning ${columnList(t.id, t.programId, t.idNamespace, t.processorEventId)})
    insert into ${ids} (${columnList(ids.programId, ids.namespace, ids.alias, ids.paymentId, ids.saleId)})
    select ${columnName(t.programId)}, ${columnName(t.idNamespace)}, ${columnName(t.processorEventId)},
           ${columnName(t.processorEventId)}, ${columnName(t.id)}
    from sale
    on conflict (${columnName(ids.namespace)}, ${columnName(ids.alias)}) do nothing`;
}

/** Each sale value's PostgreSQL type, as the insert functions declare their parameters. */
const SALE_VALUE_TYPES = {
  processorEventId: "text",
  programId: "integer",
  partnerId: "integer",
  amountCents: "bigint",
  taxCents: "bigint",
  currency: "text",
  saleType: "text",
  lineItems: "jsonb",
  isRecurring: "boolean",
  subscriptionId: "text",
  subscriptionInterval: "text",
  productId: "text",
  occurredAt: "timestamp with time zone",
  provider: "text",
  providerPaymentId: "text",
  livemode: "boolean",
  source: "text",
  needsCommission: "boolean",
  isTest: "boolean",
  now: "timestamp with time zone",
} as const;

// One insert per way the sale names its customer, each run as a PL/pgSQL function (`keptPlanStatement`,
// migration 0029): planned once per connection instead of on every sale.
export const saleInserts = {
  none: keptPlanStatement({
    functionName: "insert_sale",
    names: SALE_VALUES,
    parameterTypes: SALE_VALUE_TYPES,
    returns: [],
    build: (v) => saleInsertStatement(v, sql`null::bigint`),
  }),
  update: keptPlanStatement({
    functionName: "insert_sale_of_customer",
    names: [...SALE_VALUES, "customerId"] as const,
    parameterTypes: { ...SALE_VALUE_TYPES, customerId: "bigint" },
    returns: [],
    build: (v) => saleInsertStatement(v, sql`${v.customerId}::bigint`),
  }),
  create: keptPlanStatement({
    functionName: "insert_sale_of_new_customer",
    names: [...SALE_VALUES, "customerProgramId", "customerClickId"] as const,
    parameterTypes: { ...SALE_VALUE_TYPES, customerProgramId: "integer", customerClickId: "text" },
    returns: [],
    build: (v) => saleInsertStatement(v, customerByClick(v.customerProgramId, v.customerClickId)),
  }),
};

/** The sale insert's step: one per way the sale names its customer. */
function saleStep(decision: Recorded, now: string, needsCommission: boolean): SaleWriteSteps {
  const s = decision.sale;
  const values = {
    processorEventId: s.processorEventId,
    programId: s.programId,
    partnerId: s.partnerId,
    amountCents: s.amountCents,
    taxCents: s.taxCents,
    currency: s.currency,
    saleType: s.saleType,
    lineItems: s.lineItems === null ? null : wellFormedJson(s.lineItems),
    isRecurring: s.isRecurring,
    subscriptionId: s.subscriptionId,
    subscriptionInterval: s.subscriptionInterval,
    productId: s.productId,
    occurredAt: s.occurredAt?.toISOString() ?? null,
    provider: s.provider,
    providerPaymentId: s.providerPaymentId,
    livemode: s.livemode,
    source: s.source,
    needsCommission,
    isTest: s.isTest,
    now,
  };
  const c = decision.customer;
  if (c.kind === "update") return { saleOfCustomer: { ...values, customerId: c.id } };
  if (c.kind === "create") {
    return { saleOfNewCustomer: { ...values, customerProgramId: c.programId, customerClickId: c.clickId } };
  }
  return { sale: values };
}

function namespaceOf(decision: Recorded): PaymentNamespace {
  return paymentNamespace(decision.sale.isTest, decision.sale.programId);
}

/** Sales as `s`, the alias `saleKeyOf` is written for. */
const s = alias(saleEvents, "s");

/** A sale's row, by its id in its namespace (for `affiliate_sale_events s`). */
function saleKeyOf(processorEventId: string | Placeholder, namespace: string | Placeholder): SQL {
  return sql`${s.processorEventId} = ${processorEventId}::text and ${s.idNamespace} = ${namespace}::text`;
}

// The sale's commission and, approved at once, its credit, each a PL/pgSQL function (`keptPlanStatement`,
// migration 0037), written once with the scheduled repair's (`lib/commissions/credit.ts`).
export const saleCommissionInsert = keptPlanStatement({
  functionName: "insert_sale_commission",
  names: [
    "processorEventId",
    "namespace",
    "amountCents",
    "currency",
    "status",
    "holdUntil",
    "approvedAt",
    "at",
  ],
  parameterTypes: {
    processorEventId: "text",
    namespace: "text",
    amountCents: "bigint",
    currency: "text",
    status: "text",
    holdUntil: "timestamp with time zone",
    approvedAt: "timestamp with time zone",
    at: "timestamp with time zone",
  },
  returns: [],
  build: (v) => commissionInsert(v, saleKeyOf(v.processorEventId, v.namespace)),
});
export const saleCommissionCredit = keptPlanStatement({
  functionName: "credit_sale_commission",
  names: ["processorEventId", "namespace", "at"],
  parameterTypes: { processorEventId: "text", namespace: "text", at: "timestamp with time zone" },
  returns: [["credited", "integer"]],
  build: (v) => creditCommissionStatement(commissionOfSale(saleKeyOf(v.processorEventId, v.namespace)), v.at),
});

/** The commission's steps: its insert and, approved at once, its credit. */
function commissionSteps(decision: Recorded, at: string): SaleWriteSteps {
  const plan = decision.commission;
  if (!plan) return {};
  const sale = { processorEventId: decision.sale.processorEventId, namespace: namespaceOf(decision) };
  const commission = { ...sale, ...commissionValues(plan, at) };
  return plan.status === "approved" ? { commission, credit: { ...sale, at } } : { commission };
}

/** The payment's ids as a text array, from the JSON array the worker sends (one parameter, any length). */
function idArray(ids: Placeholder): SQL {
  return sql`array(select json_array_elements_text(${ids}::json))`;
}

/**
 * The payment's other ids (`ids`, a JSON array of text, but for the sale's own id `paymentId`, which the sale's
 * insert writes linked) into the one ids index, not linked yet, FIRST in the transaction: a concurrent writer
 * of one of these ids as an alias waits here for the other to commit, and then fails the guard of
 * `saleLinkAndFinish`; one writing it as its own sale id waits at its insert instead. An id already there (an
 * alias kept unlinked) is left as it is, and linked there. Two sales of one id meet at the sale's unique
 * index. A PL/pgSQL function (`keptPlanStatement`, migrations 0037 and 0049).
 */
export const paymentIdsClaim = keptPlanStatement({
  functionName: "claim_payment_ids",
  names: ["programId", "namespace", "paymentId", "ids"],
  parameterTypes: { programId: "integer", namespace: "text", paymentId: "text", ids: "json" },
  returns: [],
  build: (v) => {
    const t = paymentAliases;
    return sql`
      insert into ${t} (${columnName(t.programId)}, ${columnName(t.namespace)}, ${columnName(t.alias)},
                        ${columnName(t.paymentId)}, ${columnName(t.saleId)})
      select ${v.programId}::int, ${v.namespace}::text, id.alias, ${v.paymentId}::text, null::bigint
      from json_array_elements_text(${v.ids}::json) id(alias)
      where id.alias <> ${v.paymentId}::text
      on conflict (${columnName(t.namespace)}, ${columnName(t.alias)}) do nothing`;
  },
});

/**
 * The sale write's last statement (a PL/pgSQL function, `keptPlanStatement`, migrations 0037 and 0049):
 *
 * - The payment's ids (and aliases recorded unlinked before this sale existed) now point to the sale,
 *   guarded: every row naming one of the ids must be the sale's own (its id, which its insert wrote linked) or
 *   one this statement linked. A row linked to another sale (written since the read, or by a concurrent writer
 *   the insert or the claim waited for) fails the guard, and so does one another transaction linked while this
 *   one waited for its row lock (the update skips it; `matching`, read before the wait, still holds it): the
 *   batch aborts and the retry's read answers the duplicate. The rows are found by one lookup per index, not
 *   by one `or` of both: the generic plan of the `or` read every row of the namespace (EXPLAIN on the bench
 *   database). The rows to link are then updated by `id = any(array(...))`, each a lookup of the primary key:
 *   with `id in (select ...)`, a plan made once every id was linked walked the whole primary key.
 * - The sale's webhooks (`sale.created`, and `commission.created` when the batch wrote a commission) into the
 *   outbox, after the guard in the row's columns.
 * - The ids written.
 */
export const saleLinkAndFinish = keptPlanStatement({
  functionName: "link_payment_ids_and_enqueue_webhooks",
  names: ["processorEventId", "namespace", "ids", "at"],
  parameterTypes: {
    processorEventId: "text",
    namespace: "text",
    ids: "json",
    at: "timestamp with time zone",
  },
  returns: [
    ["sale_id", "bigint"],
    ["commission_id", "bigint"],
    ["linked", "boolean"],
    ["enqueued", "integer"],
  ],
  build: (v) => {
    const t = paymentAliases;
    const a = alias(paymentAliases, "a");
    const sale = saleKeyOf(v.processorEventId, v.namespace);
    return sql`
      with matching as (
        select ${a.id}, ${a.saleId} from ${paymentAliases} ${a}
        where ${a.namespace} = ${v.namespace}::text and ${a.alias} = any(${idArray(v.ids)})
        union
        select ${a.id}, ${a.saleId} from ${paymentAliases} ${a}
        where ${a.namespace} = ${v.namespace}::text and ${a.paymentId} = any(${idArray(v.ids)})),
      linked_now as (
        update ${t}
        set ${columnName(t.saleId)} = (select ${s.id} from ${saleEvents} ${s} where ${sale})
        where ${t.id} = any(array(select id from matching where sale_id is null)) and ${t.saleId} is null
        returning ${t.id})
      select ${s.id} as sale_id, ${commissions.id} as commission_id,
             guard(not exists (select 1 from matching
                               where matching.sale_id is distinct from ${s.id}
                                 and not exists (select 1 from linked_now where linked_now.id = matching.id)),
                   'payment recorded meanwhile') as linked,
             (select count(*)::int from (${saleWebhooksStatement(sale, v.at)}) w) as enqueued
      from ${saleEvents} ${s} left join ${commissions} on ${commissions.saleId} = ${s.id}
      where ${sale}`;
  },
});

/**
 * The sale write's statements as ONE statement (`keptPlanSequence`, migration 0041), in this order: the
 * payment's other ids claimed, the customer created or converted, its click's provisional leads settled, the
 * sale with its own id, its commission and credit, and the ids linked with the webhooks. Up to seven statements
 * of a batch before.
 */
export const saleWrite = keptPlanSequence({
  functionName: "write_sale",
  steps: {
    claim: paymentIdsClaim,
    customerCreate: customerWrites.create,
    customerUpdate: customerWrites.update,
    settle: provisionalLeadsSettle,
    sale: saleInserts.none,
    saleOfCustomer: saleInserts.update,
    saleOfNewCustomer: saleInserts.create,
    commission: saleCommissionInsert,
    credit: saleCommissionCredit,
    finish: saleLinkAndFinish,
  },
  returnsFrom: "finish",
});

type SaleWriteSteps = Parameters<typeof saleWrite.call>[0];

/**
 * The sale's write through the isolate's group commit: sales arriving while one is being written go together
 * as one call of `write_sales` (migration 0048), each in a subtransaction of its own, in the order of their
 * partners (whose balances an approved commission's credit locks).
 */
export const saleWriteSent = groupCommittedWrite<
  typeof saleWrite,
  { sale_id: unknown; commission_id: unknown; linked: unknown; enqueued: unknown }
>({ functionName: "write_sales", sequence: saleWrite, what: "the sale's write" });

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
  options: { withCommission?: boolean; aliases?: readonly string[]; sending?: Sending } = {},
): Promise<{ saleId: number; commissionId: number | null }> {
  const at = now.toISOString();
  const withCommission = options.withCommission ?? true;
  const aliases = (options.aliases ?? []).filter((a) => a !== decision.sale.processorEventId);
  const ids = wellFormedJson([decision.sale.processorEventId, ...aliases]);
  const needsCommission = !withCommission && decision.commission !== null;
  const sale = { processorEventId: decision.sale.processorEventId, namespace: namespaceOf(decision) };
  const written = await saleWriteSent.send(
    db,
    {
      claim: {
        programId: decision.sale.programId,
        namespace: sale.namespace,
        paymentId: sale.processorEventId,
        ids,
      },
      ...customerStep(decision, at),
      ...settleStep(decision, at),
      ...saleStep(decision, at, needsCommission),
      ...(withCommission ? commissionSteps(decision, at) : {}),
      finish: { ...sale, ids, at },
    },
    decision.sale.partnerId ?? 0,
    options.sending,
  );
  return {
    saleId: fromDriver(s.id, written.sale_id),
    commissionId: fromDriverOrNull(commissions.id, written.commission_id),
  };
}
