import { and, eq, isNull, type SQL, sql } from "drizzle-orm";
import {
  type CustomerStatus,
  customerClickUniqueIndex,
  customerKeyUniqueIndex,
  customers,
} from "../../../schema/customers.ts";
import { leadEvents } from "../../../schema/events.ts";
import type { LeadAuthPolicy } from "../../../schema/programs.ts";
import { apiKeyRecordFromRow, apiKeyRecordQuery } from "../../auth/program-key.ts";
import type { Database } from "../../db/client.ts";
import { leadWebhookStatement } from "../../webhooks/outbox-statements.ts";
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

type LeadRow = {
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
 * Every fact the lead rules need, in ONE statement (one round trip): the key, the click resolved to the
 * visitor's original click, the customer of that click, the customer holding `customer_key`, and the
 * programs involved. Nothing is written here.
 */
export async function readLeadFacts(db: Database, r: LeadRead): Promise<LeadFacts> {
  const result = await db.execute<LeadRow>(sql`
    with api_key as (${apiKeyRecordQuery(r.keyHash)}),
    sent_click as (
      select click_id, program_id, partner_id, is_test, created_at, visitor_click_id
      from affiliate_click_events
      where click_id = ${r.clickId}::text
    ),
    click as (
      select coalesce(o.click_id, s.click_id) as click_id,
             s.program_id,
             coalesce(o.partner_id, s.partner_id) as partner_id,
             coalesce(o.created_at, s.created_at) as clicked_at,
             s.is_test
      from sent_click s
      left join affiliate_click_events o on o.click_id = s.visitor_click_id and o.program_id = s.program_id
    ),
    customer_by_click as (
      select cu.id, cu.status, cu.partner_id, cu.click_id
      from customers cu
      join click on cu.program_id = click.program_id and cu.click_id = click.click_id
    ),
    customer_by_key as (
      select id, status, partner_id, click_id
      from customers
      where customer_key = ${r.customerKey}::text
        and program_id = coalesce((select program_id from api_key), (select program_id from click))
    ),
    program as (
      select id, lead_auth_policy, allowed_origins
      from programs
      where id in ((select program_id from api_key), (select program_id from click), ${r.explicitProgramId}::int)
    )
    select
      (select row_to_json(api_key) from api_key) as api_key,
      (select row_to_json(click) from click) as click,
      (select row_to_json(customer_by_click) from customer_by_click) as customer_by_click,
      (select row_to_json(customer_by_key) from customer_by_key) as customer_by_key,
      (select coalesce(json_agg(program), '[]'::json) from program) as programs
  `);
  const row = result.rows[0];
  if (!row) throw new Error("lead read returned no row");
  const customer = (c: CustomerRow | null): LeadCustomerFact | null =>
    c && { id: Number(c.id), status: c.status, partnerId: c.partner_id, clickId: c.click_id };
  return {
    apiKey: apiKeyRecordFromRow(row.api_key ?? undefined),
    click: row.click && {
      clickId: row.click.click_id,
      programId: row.click.program_id,
      partnerId: row.click.partner_id,
      clickedAt: new Date(row.click.clicked_at),
      isTest: row.click.is_test,
    },
    programs: row.programs.map((p) => ({
      id: p.id,
      leadAuthPolicy: p.lead_auth_policy,
      allowedOrigins: p.allowed_origins,
    })),
    customerByClick: customer(row.customer_by_click),
    customerByKey: customer(row.customer_by_key),
  };
}

function leadEventValues(e: LeadEventRow, customerId: SQL | number | null) {
  return {
    programId: e.programId,
    customerId,
    partnerId: e.partnerId,
    clickId: e.clickId,
    customerKey: e.customerKey,
    emailHash: e.email?.hash ?? null,
    emailMasked: e.email?.masked ?? null,
    eventName: e.eventName,
    provisional: e.provisional,
    settledAt: e.settledAt,
    viaApiKey: e.viaApiKey,
    isTest: e.isTest,
    createdAt: e.createdAt,
  };
}

/**
 * Writes what `decideLead` decided in ONE round trip: one `db.batch`, one transaction. Race safety:
 * - a new customer relies on the unique (program, click) and (program, customer_key) constraints, so of two
 *   identical leads one commits and the other fails with 23505 and re-reads (`leadConflictConstraints`);
 * - promoting an existing `clicked` customer is guarded on that status;
 * - a provisional lead is guarded on no customer of its click or key having become a lead meanwhile.
 * Returns the id of the lead event written.
 */
export async function writeLead(db: Database, write: LeadWrite): Promise<{ leadEventId: number }> {
  const e = write.leadEvent;
  const insertEvent = (customerId: SQL | number | null) =>
    db.insert(leadEvents).values(leadEventValues(e, customerId)).returning({ id: leadEvents.id });
  const leadWebhook = leadWebhookStatement(e.createdAt.toISOString());

  if (write.kind === "test") {
    const [inserted] = await db.batch([insertEvent(null), db.execute(leadWebhook)]);
    return { leadEventId: idOf(inserted) };
  }

  if (write.kind === "provisional") {
    const u = write.unchanged;
    const [, inserted] = await db.batch([
      db.execute(sql`
        select guard(not exists (
          select 1 from customers
          where program_id = ${u.programId}::int
            and status <> 'clicked'
            and (click_id = ${u.clickId}::text or customer_key = ${u.customerKey}::text)
        ), 'lead-provisional-customer-unchanged')`),
      insertEvent(null),
      db.execute(leadWebhook),
    ]);
    return { leadEventId: idOf(inserted) };
  }

  const c = write.customer;
  const customerId: SQL | number =
    c.kind === "create"
      ? sql`(select id from ${customers} where ${customers.programId} = ${c.programId} and ${customers.clickId} = ${c.clickId})`
      : c.customerId;
  const customerStatement =
    c.kind === "create"
      ? db.insert(customers).values({
          programId: c.programId,
          partnerId: c.partnerId,
          clickId: c.clickId,
          clickedAt: c.clickedAt,
          customerKey: c.customerKey,
          status: "lead",
          emailHash: c.email?.hash ?? null,
          emailMasked: c.email?.masked ?? null,
          signedUpAt: c.signedUpAt,
          createdAt: c.signedUpAt,
          updatedAt: c.signedUpAt,
        })
      : db.execute(sql`
          with promoted as (
            update customers
            set status = 'lead',
                customer_key = coalesce(${c.customerKey}::text, customer_key),
                email_hash = coalesce(${c.email?.hash ?? null}::text, email_hash),
                email_masked = coalesce(${c.email?.masked ?? null}::text, email_masked),
                signed_up_at = ${c.signedUpAt.toISOString()}::timestamptz,
                updated_at = ${c.signedUpAt.toISOString()}::timestamptz
            where id = ${c.customerId} and status = 'clicked'
            returning id
          )
          select guard(exists (select 1 from promoted), 'lead-customer-still-clicked')`);
  const settle = write.settleProvisionalOf;
  const settleStatement = settle
    ? db
        .update(leadEvents)
        .set({ settledAt: e.settledAt, customerId })
        .where(
          and(
            eq(leadEvents.programId, settle.programId),
            eq(leadEvents.clickId, settle.clickId),
            // Written as the partial index's predicate, so the planner can use it.
            sql`${leadEvents.provisional}`,
            isNull(leadEvents.settledAt),
            eq(leadEvents.isTest, false),
          ),
        )
    : null;
  const [, ...rest] = settleStatement
    ? await db.batch([customerStatement, settleStatement, insertEvent(customerId), db.execute(leadWebhook)])
    : await db.batch([customerStatement, insertEvent(customerId), db.execute(leadWebhook)]);
  // The last statement is the webhook outbox's; the lead event's insert is the one before it.
  return { leadEventId: idOf(rest[rest.length - 2]) };
}

function idOf(inserted: unknown): number {
  const id = (inserted as Array<{ id: number }> | undefined)?.[0]?.id;
  if (typeof id !== "number") throw new Error("lead event insert returned no id");
  return id;
}
