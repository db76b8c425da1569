import { type Placeholder, type SQL, sql } from "drizzle-orm";
import { alias } from "drizzle-orm/pg-core";
import {
  type CustomerStatus,
  customerClickUniqueIndex,
  customerKeyUniqueIndex,
  customers,
} from "../../../schema/customers.ts";
import { clickEvents, leadEvents } from "../../../schema/events.ts";
import { type LeadAuthPolicy, programs } from "../../../schema/programs.ts";
import { apiKeyRecordFromRow, apiKeyRecordQuery } from "../../auth/program-key.ts";
import { checkedNotSearched } from "../../db/checked-not-searched.ts";
import type { Database } from "../../db/client.ts";
import { columnList, columnName, fromDriver } from "../../db/columns.ts";
import { groupCommittedStatement, type Sending } from "../../db/group-committed-statement.ts";
import { groupCommittedWrite } from "../../db/group-committed-write.ts";
import { keptPlanStatement } from "../../db/kept-plan.ts";
import { keptPlanSequence } from "../../db/kept-plan-sequence.ts";
import type { DeviceHashes } from "../../fraud/device-hash.ts";
import { leadCreatedWebhook } from "../../webhooks/outbox-statements.ts";
import { customerByClick } from "../customer-by-click.ts";
import { provisionalLeadsSettle } from "../settle-provisional-leads.ts";
import type { LeadCustomerFact, LeadEventRow, LeadFacts, LeadWrite } from "./decide-lead.ts";

/** The unique constraints a concurrent settled lead of the same customer runs into (then re-read). */
export const leadConflictConstraints = [customerClickUniqueIndex, customerKeyUniqueIndex] as const;

export interface LeadRead {
  keyHash: string | null;
  clickId: string | null;
  customerKey: string | null;
  /** `additional_data.program_id`, else the top-level `program_id` (test mode names its program so). */
  explicitProgramId: number | null;
}

type CustomerRow = { id: number; status: CustomerStatus; partner_id: number | null; click_id: string | null };

export type LeadRow = {
  api_key: {
    program_id: number;
    is_test: boolean;
    rotation_marked_at: string | null;
    rotate_by: string | null;
  } | null;
  click: {
    click_id: string;
    program_id: number;
    partner_id: number;
    clicked_at: string;
    is_test: boolean;
  } | null;
  customer_by_click: CustomerRow | null;
  customer_by_key: CustomerRow | null;
  programs: Array<{ id: number; lead_auth_policy: LeadAuthPolicy; allowed_origins: string[] }>;
};

/**
 * The lead read's one statement, run as the PL/pgSQL function `read_lead_facts` (`keptPlanStatement`,
 * migration 0027): planning it on every lead cost PostgreSQL more than running it (about 1.1 ms under load).
 */
export const leadFactsStatement = keptPlanStatement({
  functionName: "read_lead_facts",
  names: ["keyHash", "clickId", "customerKey", "explicitProgramId"],
  parameterTypes: { keyHash: "text", clickId: "text", customerKey: "text", explicitProgramId: "integer" },
  returns: [
    ["api_key", "json"],
    ["click", "json"],
    ["customer_by_click", "json"],
    ["customer_by_key", "json"],
    ["programs", "json"],
  ],
  build: (q) => {
    const k = clickEvents;
    const o = alias(clickEvents, "o");
    const cu = alias(customers, "cu");
    const c = customers;
    const p = programs;
    // The CTEs' own column names (click_id, program_id, ...) are local to this statement; every table column
    // is named through the schema.
    return sql`
    with api_key as (${apiKeyRecordQuery(q.keyHash)}),
    sent_click as (
      select ${k.clickId} as click_id, ${k.programId} as program_id, ${k.partnerId} as partner_id,
             ${k.isTest} as is_test, ${k.createdAt} as created_at, ${k.visitorClickId} as visitor_click_id
      from ${k}
      where ${k.clickId} = ${q.clickId}::text
    ),
    click as (
      select coalesce(${o.clickId}, s.click_id) as click_id,
             s.program_id,
             coalesce(${o.partnerId}, s.partner_id) as partner_id,
             coalesce(${o.createdAt}, s.created_at) as clicked_at,
             s.is_test
      from sent_click s
      left join ${clickEvents} ${o}
        on ${o.clickId} = s.visitor_click_id and ${checkedNotSearched(sql`${o.programId} = s.program_id`)}
    ),
    customer_by_click as (
      select ${cu.id} as id, ${cu.status} as status, ${cu.partnerId} as partner_id, ${cu.clickId} as click_id
      from ${customers} ${cu}
      join click on ${cu.programId} = click.program_id and ${cu.clickId} = click.click_id
    ),
    customer_by_key as (
      select ${c.id} as id, ${c.status} as status, ${c.partnerId} as partner_id, ${c.clickId} as click_id
      from ${c}
      where ${c.customerKey} = ${q.customerKey}::text
        and ${c.programId} = coalesce((select program_id from api_key), (select program_id from click))
    ),
    program as (
      select ${p.id} as id, ${p.leadAuthPolicy} as lead_auth_policy, ${p.allowedOrigins} as allowed_origins
      from ${p}
      where ${p.id} in ((select program_id from api_key), (select program_id from click), ${q.explicitProgramId}::int)
    )
    select
      (select row_to_json(api_key) from api_key) as api_key,
      (select row_to_json(click) from click) as click,
      (select row_to_json(customer_by_click) from customer_by_click) as customer_by_click,
      (select row_to_json(customer_by_key) from customer_by_key) as customer_by_key,
      (select coalesce(json_agg(program), '[]'::json) from program) as programs
  `;
  },
});

/** The lead's read through the isolate's group commit (`read_lead_facts_batch`, migrations 0045, 0052). */
export const leadReadSent = groupCommittedStatement<typeof leadFactsStatement.names, LeadRow>({
  functionName: "read_lead_facts_batch",
  statement: leadFactsStatement,
  what: "lead read",
  inlined: true,
});

/**
 * Every fact the lead rules need, in ONE statement (one round trip, which may be shared with the reads of other
 * leads arriving at the same time, `lib/db/group-commit.ts`): the key, the click resolved to the
 * visitor's original click, the customer of that click, the customer holding `customer_key`, and the
 * programs involved. Nothing is written here.
 */
export async function readLeadFacts(db: Database, r: LeadRead, sending?: Sending): Promise<LeadFacts> {
  return leadFactsFromRow(await leadReadSent.send(db, r, sending));
}

/** The lead read's row (or the same facts answered by `record_lead_at_once`) as the rules take it. */
export function leadFactsFromRow(row: LeadRow): LeadFacts {
  const k = clickEvents;
  const c = customers;
  const p = programs;
  const customer = (row: CustomerRow | null): LeadCustomerFact | null =>
    row && {
      id: fromDriver(c.id, row.id),
      status: fromDriver(c.status, row.status),
      partnerId: row.partner_id === null ? null : fromDriver(c.partnerId, row.partner_id),
      clickId: row.click_id,
    };
  return {
    apiKey: apiKeyRecordFromRow(row.api_key ?? undefined),
    click: row.click && {
      clickId: fromDriver(k.clickId, row.click.click_id),
      programId: fromDriver(k.programId, row.click.program_id),
      partnerId: fromDriver(k.partnerId, row.click.partner_id),
      clickedAt: fromDriver(k.createdAt, row.click.clicked_at),
      isTest: row.click.is_test,
    },
    programs: row.programs.map((program) => ({
      id: fromDriver(p.id, program.id),
      leadAuthPolicy: fromDriver(p.leadAuthPolicy, program.lead_auth_policy),
      allowedOrigins: program.allowed_origins,
    })),
    customerByClick: customer(row.customer_by_click),
    customerByKey: customer(row.customer_by_key),
  };
}

const LEAD_EVENT_VALUES = [
  "programId",
  "partnerId",
  "clickId",
  "customerKey",
  "emailHash",
  "emailMasked",
  "eventName",
  "provisional",
  "settledAt",
  "viaApiKey",
  "ipHash",
  "uaHash",
  "isTest",
  "createdAt",
] as const;
type LeadEventValue = (typeof LEAD_EVENT_VALUES)[number];

/**
 * The lead event's insert and its `lead.created` webhook, one statement: the insert returns its row as `l`,
 * which the webhook's payload reads (`leadCreatedWebhook`). Returns the event's id. `customerId` names the
 * customer (or null); `guard`, a `where guard(...)` clause, aborts the transaction before the webhook is
 * enqueued when the state the lead was decided on has changed.
 */
function leadEventInsertStatement(
  v: { [Name in LeadEventValue]: Placeholder<Name> },
  customerId: SQL,
  guard: SQL = sql``,
): SQL {
  const t = leadEvents;
  const l = alias(leadEvents, "l");
  return sql`
    with l as (
      insert into ${t}
        (${columnList(
          t.programId,
          t.customerId,
          t.partnerId,
          t.clickId,
          t.customerKey,
          t.emailHash,
          t.emailMasked,
          t.eventName,
          t.provisional,
          t.settledAt,
          t.viaApiKey,
          t.ipHash,
          t.uaHash,
          t.isTest,
          t.createdAt,
        )})
      values
        (${v.programId}::int, ${customerId}, ${v.partnerId}::int, ${v.clickId}::text, ${v.customerKey}::text,
         ${v.emailHash}::text, ${v.emailMasked}::text, ${v.eventName}::text, ${v.provisional}::boolean,
         ${v.settledAt}::timestamptz, ${v.viaApiKey}::boolean, ${v.ipHash}::text, ${v.uaHash}::text,
         ${v.isTest}::boolean, ${v.createdAt}::timestamptz)
      returning *)
    select ${l.id} as id, ${leadCreatedWebhook(v.createdAt)} as enqueued from l${guard}`;
}

/** Each lead event value's PostgreSQL type, as the insert functions declare their parameters. */
const LEAD_EVENT_VALUE_TYPES = {
  programId: "integer",
  partnerId: "integer",
  clickId: "text",
  customerKey: "text",
  emailHash: "text",
  emailMasked: "text",
  eventName: "text",
  provisional: "boolean",
  settledAt: "timestamp with time zone",
  viaApiKey: "boolean",
  ipHash: "text",
  uaHash: "text",
  isTest: "boolean",
  createdAt: "timestamp with time zone",
} as const;

/**
 * One insert per way the lead names its customer, each with the lead's webhook and run as a PL/pgSQL
 * function (`keptPlanStatement`, migration 0040, where 0029's inserts had the webhook as a statement of its
 * own): planned once per connection instead of on every lead.
 */
const LEAD_EVENT_RESULT = [
  ["id", "bigint"],
  ["enqueued", "integer"],
] as const;
export const leadEventInserts = {
  none: keptPlanStatement({
    functionName: "record_lead_event",
    names: LEAD_EVENT_VALUES,
    parameterTypes: LEAD_EVENT_VALUE_TYPES,
    returns: LEAD_EVENT_RESULT,
    build: (v) => leadEventInsertStatement(v, sql`null::bigint`),
  }),
  existing: keptPlanStatement({
    functionName: "record_lead_event_of_customer",
    names: [...LEAD_EVENT_VALUES, "customerId"] as const,
    parameterTypes: { ...LEAD_EVENT_VALUE_TYPES, customerId: "bigint" },
    returns: LEAD_EVENT_RESULT,
    build: (v) => leadEventInsertStatement(v, sql`${v.customerId}::bigint`),
  }),
  created: keptPlanStatement({
    functionName: "record_lead_event_of_new_customer",
    names: [...LEAD_EVENT_VALUES, "customerProgramId", "customerClickId"] as const,
    parameterTypes: { ...LEAD_EVENT_VALUE_TYPES, customerProgramId: "integer", customerClickId: "text" },
    returns: LEAD_EVENT_RESULT,
    build: (v) => leadEventInsertStatement(v, customerByClick(v.customerProgramId, v.customerClickId)),
  }),
};

function leadEventValues(e: LeadEventRow, device: DeviceHashes | null) {
  return {
    programId: e.programId,
    partnerId: e.partnerId,
    clickId: e.clickId,
    customerKey: e.customerKey,
    emailHash: e.email?.hash ?? null,
    emailMasked: e.email?.masked ?? null,
    eventName: e.eventName,
    provisional: e.provisional,
    settledAt: e.settledAt?.toISOString() ?? null,
    viaApiKey: e.viaApiKey,
    ipHash: device?.ipHash ?? null,
    uaHash: device?.uaHash ?? null,
    isTest: e.isTest,
    createdAt: e.createdAt.toISOString(),
  };
}

/**
 * A provisional lead is written only while no customer of its click or key has become a lead: its insert is
 * guarded so, in the same statement (a PL/pgSQL function, `keptPlanStatement`, migration 0040, where the
 * guard was a statement of its own, 0036). One `not exists` per way of naming the customer: a generic plan
 * cannot drop a null key's arm of an `or`, and for the `or` it walked every customer of the program.
 */
export const provisionalLeadEventInsert = keptPlanStatement({
  functionName: "record_provisional_lead_event",
  names: [...LEAD_EVENT_VALUES, "unchangedProgramId", "unchangedClickId", "unchangedCustomerKey"] as const,
  parameterTypes: {
    ...LEAD_EVENT_VALUE_TYPES,
    unchangedProgramId: "integer",
    unchangedClickId: "text",
    unchangedCustomerKey: "text",
  },
  returns: LEAD_EVENT_RESULT,
  build: (v) => {
    const t = customers;
    return leadEventInsertStatement(
      v,
      sql`null::bigint`,
      sql`
    where guard(
      not exists (
        select 1 from ${t}
        where ${t.programId} = ${v.unchangedProgramId}::int and ${t.clickId} = ${v.unchangedClickId}::text
          and ${t.status} <> 'clicked')
      and not exists (
        select 1 from ${t}
        where ${t.programId} = ${v.unchangedProgramId}::int and ${t.customerKey} = ${v.unchangedCustomerKey}::text
          and ${t.status} <> 'clicked'),
      'lead-provisional-customer-unchanged')`,
    );
  },
});

/**
 * The server lead's customer, created from its click with status `lead`, or an existing `clicked` one
 * promoted, each a PL/pgSQL function (`keptPlanStatement`, migration 0043; sent as text before). A new
 * customer relies on the unique (program, click) and (program, customer_key) constraints; the promotion is
 * guarded on the status the rules read.
 */
export const leadCustomerWrites = {
  create: keptPlanStatement({
    functionName: "create_lead_customer",
    names: [
      "programId",
      "partnerId",
      "clickId",
      "clickedAt",
      "customerKey",
      "emailHash",
      "emailMasked",
      "signedUpAt",
    ],
    parameterTypes: {
      programId: "integer",
      partnerId: "integer",
      clickId: "text",
      clickedAt: "timestamp with time zone",
      customerKey: "text",
      emailHash: "text",
      emailMasked: "text",
      signedUpAt: "timestamp with time zone",
    },
    returns: [],
    build: (v) => {
      const t = customers;
      return sql`
      insert into ${t} (${columnList(
        t.programId,
        t.partnerId,
        t.clickId,
        t.clickedAt,
        t.customerKey,
        t.status,
        t.emailHash,
        t.emailMasked,
        t.signedUpAt,
        t.createdAt,
        t.updatedAt,
      )})
      values (${v.programId}::int, ${v.partnerId}::int, ${v.clickId}::text, ${v.clickedAt}::timestamptz,
              ${v.customerKey}::text, 'lead', ${v.emailHash}::text, ${v.emailMasked}::text,
              ${v.signedUpAt}::timestamptz, ${v.signedUpAt}::timestamptz, ${v.signedUpAt}::timestamptz)`;
    },
  }),
  promote: keptPlanStatement({
    functionName: "promote_customer_to_lead",
    names: ["customerId", "customerKey", "emailHash", "emailMasked", "signedUpAt"],
    parameterTypes: {
      customerId: "bigint",
      customerKey: "text",
      emailHash: "text",
      emailMasked: "text",
      signedUpAt: "timestamp with time zone",
    },
    returns: [["promoted", "boolean"]],
    build: (v) => {
      const t = customers;
      return sql`
      with promoted as (
        update ${t}
        set ${columnName(t.status)} = 'lead',
            ${columnName(t.customerKey)} = coalesce(${v.customerKey}::text, ${t.customerKey}),
            ${columnName(t.emailHash)} = coalesce(${v.emailHash}::text, ${t.emailHash}),
            ${columnName(t.emailMasked)} = coalesce(${v.emailMasked}::text, ${t.emailMasked}),
            ${columnName(t.signedUpAt)} = ${v.signedUpAt}::timestamptz,
            ${columnName(t.updatedAt)} = ${v.signedUpAt}::timestamptz
        where ${t.id} = ${v.customerId}::bigint and ${t.status} = 'clicked'
        returning ${t.id})
      select guard(exists (select 1 from promoted), 'lead-customer-still-clicked') as promoted`;
    },
  }),
};

/**
 * A server lead's write as ONE statement (`keptPlanSequence`, migration 0043): its customer created or
 * promoted, its click's provisional leads settled, and the event with its webhook. Up to three statements
 * of a batch before.
 */
export const leadWrite = keptPlanSequence({
  functionName: "write_lead",
  steps: {
    customerCreate: leadCustomerWrites.create,
    customerPromote: leadCustomerWrites.promote,
    settle: provisionalLeadsSettle,
    eventOfCustomer: leadEventInserts.existing,
    eventOfNewCustomer: leadEventInserts.created,
  },
  returnsFrom: ["eventOfCustomer", "eventOfNewCustomer"],
});

/**
 * A server lead's write through the isolate's group commit: those arriving while one is being written go
 * together as one call of `write_leads` (migration 0048), each in a subtransaction of its own.
 */
export const leadWriteSent = groupCommittedWrite<typeof leadWrite, { id: unknown }>({
  functionName: "write_leads",
  sequence: leadWrite,
  what: "the lead's write",
});

/**
 * A provisional browser lead's write (its guarded event and webhook) as a sequence of its one statement, so
 * that those arriving while one is being written go together as one call of `write_provisional_leads`
 * (migration 0053), each in a subtransaction of its own, as server leads do, where each sent its own write.
 */
export const provisionalLeadWrite = keptPlanSequence({
  functionName: "write_provisional_lead",
  steps: { event: provisionalLeadEventInsert },
  returnsFrom: ["event"],
});

export const provisionalLeadWriteSent = groupCommittedWrite<typeof provisionalLeadWrite, { id: unknown }>({
  functionName: "write_provisional_leads",
  sequence: provisionalLeadWrite,
  what: "the provisional lead's write",
});

/**
 * Writes what `decideLead` decided in ONE round trip and one statement. Race safety:
 * - a new customer relies on the unique (program, click) and (program, customer_key) constraints, so of two
 *   identical leads one commits and the other fails with 23505 and re-reads (`leadConflictConstraints`);
 * - promoting an existing `clicked` customer is guarded on that status;
 * - a provisional lead is guarded on no customer of its click or key having become a lead meanwhile.
 * `device` is the browser's (a lead sent with the program key comes from the brand's server: null).
 * Returns the id of the lead event written.
 */
export async function writeLead(
  db: Database,
  write: LeadWrite,
  device: DeviceHashes | null = null,
  /** How the write goes to the database (the isolate's group commit); unset, or a test lead: alone. */
  sending?: Sending,
): Promise<{ leadEventId: number }> {
  const e = write.leadEvent;
  const values = leadEventValues(e, device);

  if (write.kind === "test") {
    return { leadEventId: idOf(await db.execute(leadEventInserts.none.call(values))) };
  }

  if (write.kind === "provisional") {
    const u = write.unchanged;
    const written = await provisionalLeadWriteSent.send(
      db,
      {
        event: {
          ...values,
          unchangedProgramId: u.programId,
          unchangedClickId: u.clickId,
          unchangedCustomerKey: u.customerKey,
        },
      },
      // A provisional lead locks no row another lead writes: any order will do.
      0,
      sending,
    );
    return { leadEventId: fromDriver(leadEvents.id, written.id) };
  }

  const c = write.customer;
  const settle = write.settleProvisionalOf;
  const settling = settle && {
    programId: settle.programId,
    clickId: settle.clickId,
    settledAt: e.settledAt?.toISOString() ?? null,
  };
  const email = { emailHash: c.email?.hash ?? null, emailMasked: c.email?.masked ?? null };
  const signedUpAt = c.signedUpAt.toISOString();
  const written = await leadWriteSent.send(
    db,
    c.kind === "create"
      ? {
          customerCreate: {
            programId: c.programId,
            partnerId: c.partnerId,
            clickId: c.clickId,
            clickedAt: c.clickedAt.toISOString(),
            customerKey: c.customerKey,
            ...email,
            signedUpAt,
          },
          settle: settling && {
            ...settling,
            customerId: null,
            customerProgramId: c.programId,
            customerClickId: c.clickId,
          },
          eventOfNewCustomer: { ...values, customerProgramId: c.programId, customerClickId: c.clickId },
        }
      : {
          customerPromote: { customerId: c.customerId, customerKey: c.customerKey, ...email, signedUpAt },
          settle: settling && {
            ...settling,
            customerId: c.customerId,
            customerProgramId: null,
            customerClickId: null,
          },
          eventOfCustomer: { ...values, customerId: c.customerId },
        },
    // No row is shared by many leads (a lead locks its own customer and click's leads): any order will do.
    0,
    sending,
  );
  return { leadEventId: fromDriver(leadEvents.id, written.id) };
}

function idOf(inserted: unknown): number {
  // The id is a bigserial: the driver answers it as text, as every int8.
  const id = (inserted as { rows?: Array<{ id: string | number }> } | undefined)?.rows?.[0]?.id;
  if (id === undefined) throw new Error("lead event insert returned no id");
  return fromDriver(leadEvents.id, id);
}
