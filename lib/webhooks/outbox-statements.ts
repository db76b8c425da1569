import { type Placeholder, type SQL, type SQLWrapper, sql } from "drizzle-orm";
import { alias } from "drizzle-orm/pg-core";
import { commissions, refunds } from "../../schema/commissions.ts";
import { leadEvents, saleEvents } from "../../schema/events.ts";
import { referralLinks } from "../../schema/partners.ts";
import { webhookEndpoints } from "../../schema/webhooks.ts";
import type { WebhookEventType } from "./event-types.ts";

/**
 * The statements the use cases add to their OWN transaction (no extra round trip): each calls the database
 * function `webhook_enqueue` (migration 0017), which writes the event and one delivery per subscribed,
 * enabled endpoint, deduplicated by a key naming the change (a retried batch writes one event), and swallows
 * its own failure so a webhook can never fail the change it reports. A program without endpoints pays one
 * indexed lookup. The cron then hands the deliveries to the queue (`dispatch-due.ts`).
 */

const subscribedEndpoint = alias(webhookEndpoints, "subscribed_endpoint");

/**
 * `webhook_enqueue(...)` only when an enabled endpoint of the program takes the event, else 0: the call's
 * arguments, the event's JSON above all, are otherwise built for nothing. The function asks the same
 * itself (a program's endpoints may change between the two), so the answer is the same; what this saves is
 * the payload and the call, about 20 to 35 µs of a sale's database time without endpoints (migration 0049).
 */
function enqueueWebhook(
  programId: SQLWrapper,
  type: WebhookEventType,
  dedupeKey: SQL,
  data: SQL,
  at: string | Placeholder,
): SQL {
  const e = subscribedEndpoint;
  // The type is one of the service's own names (letters and dots), written into the statement as a literal so
  // that the kept-plan functions' text stays what their migration holds.
  const typeLiteral = sql.raw(`'${type}'`);
  return sql`case when exists (select 1 from ${webhookEndpoints} ${e}
                      where ${e.programId} = ${programId} and ${e.enabled} and ${typeLiteral} = any(${e.events}))
    then webhook_enqueue(${programId}, ${typeLiteral}, ${dedupeKey}, ${data}, ${at}::timestamptz) else 0 end`;
}

/** The sale as `s` (the callers' `saleKey` names it so), its commission `c`, a refund `r`, a lead `l`. */
const s = alias(saleEvents, "s");
const c = alias(commissions, "c");
const r = alias(refunds, "r");
const l = alias(leadEvents, "l");
/** The link-state statement's updated link: a CTE `l` holding the table's own columns and `was_active`. */
const link = alias(referralLinks, "l");

const saleData = sql`jsonb_build_object(
  'sale_id', ${s.id}, 'program_id', ${s.programId}, 'partner_id', ${s.partnerId}, 'customer_id', ${s.customerId},
  'transaction_id', ${s.processorEventId}, 'amount_cents', ${s.amountCents}, 'tax_cents', ${s.taxCents},
  'currency', ${s.currency}, 'product_id', ${s.productId}, 'is_test', ${s.isTest}, 'created_at', ${s.createdAt})`;

const commissionData = sql`jsonb_build_object(
  'commission_id', ${c.id}, 'sale_id', ${c.saleId}, 'program_id', ${c.programId}, 'partner_id', ${c.partnerId},
  'status', ${c.status}, 'amount_cents', ${c.amountCents}, 'deducted_cents', ${c.deductedCents},
  'net_amount_cents', ${c.amountCents} - ${c.deductedCents}, 'currency', ${c.currency}, 'hold_until', ${c.holdUntil},
  'is_test', ${c.isTest})`;

/** `sale.created` and, when the batch wrote one, `commission.created`; `saleKey` selects the sale as `s`. */
export function saleWebhooksStatement(saleKey: SQL, at: string | Placeholder): SQL {
  return sql`
    select ${enqueueWebhook(s.programId, "sale.created", sql`'sale.created:' || ${s.id}`, saleData, at)}
    from ${saleEvents} ${s} where ${saleKey}
    union all
    ${commissionCreatedWebhookStatement(saleKey, at)}`;
}

/**
 * `commission.created` for the sale's commission, when the batch wrote one: the sale's own write, and the
 * scheduled repair of a sale whose commission failed at first. `saleKey` selects the sale as `s`.
 */
export function commissionCreatedWebhookStatement(saleKey: SQL, at: string | Placeholder): SQL {
  return sql`
    select ${enqueueWebhook(c.programId, "commission.created", sql`'commission.created:' || ${c.id}`, commissionData, at)}
    from ${saleEvents} ${s} join ${commissions} ${c} on ${c.saleId} = ${s.id} where ${saleKey}`;
}

/**
 * The `webhook_enqueue` call of `lead.created` for the lead row `l` (`enqueueWebhook`): a row of the table, or
 * the lead event's insert returning its row under the name `l` (the lead's kept-plan insert,
 * `lib/tracking/lead/lead-store.ts`).
 */
export function leadCreatedWebhook(at: string | Placeholder): SQL {
  const data = sql`jsonb_build_object(
             'lead_id', ${l.id}, 'program_id', ${l.programId}, 'partner_id', ${l.partnerId}, 'customer_id', ${l.customerId},
             'click_id', ${l.clickId}, 'customer_key', ${l.customerKey}, 'event_name', ${l.eventName},
             'provisional', ${l.provisional}, 'is_test', ${l.isTest}, 'created_at', ${l.createdAt})`;
  return enqueueWebhook(l.programId, "lead.created", sql`'lead.created:' || ${l.id}`, data, at);
}

/** `commission.updated` after a refund or reversal, with the refund's amounts; `refundRow` is its id. */
export function commissionRefundedWebhookStatement(
  commissionId: number | Placeholder,
  refundRow: SQL,
  at: string | Placeholder,
): SQL {
  return sql`
    select ${enqueueWebhook(
      c.programId,
      "commission.updated",
      sql`'commission.updated:refund:' || ${r.id}`,
      sql`${commissionData} || jsonb_build_object('reason', ${r.reason}, 'refund', jsonb_build_object(
               'refund_id', ${r.refundId}, 'amount_cents', ${r.amountCents},
               'refunded_total_cents', ${r.refundedTotalCents}, 'deduction_cents', ${r.deductionCents}))`,
      at,
    )}
    from ${commissions} ${c}, ${refunds} ${r} where ${c.id} = ${commissionId}::bigint and ${r.id} = ${refundRow}`;
}

/**
 * `commission.updated` when a fraud review rejects a held commission (reversed whole), in the shape a refund's
 * has, its reason `fraud_review` and no refund; one event per commission.
 */
export function commissionReviewRejectedWebhookStatement(commissionId: SQL, at: string): SQL {
  return sql`
    select ${enqueueWebhook(
      c.programId,
      "commission.updated",
      sql`'commission.updated:review:' || ${c.id}`,
      sql`${commissionData} || jsonb_build_object('reason', 'fraud_review', 'refund', null)`,
      at,
    )}
    from ${commissions} ${c} where ${c.id} = ${commissionId}`;
}

/** `commission.approved` when its hold ended (the approval job's transaction). */
export function commissionApprovedWebhookStatement(commissionId: SQL, at: string): SQL {
  return sql`
    select ${enqueueWebhook(
      c.programId,
      "commission.approved",
      sql`'commission.approved:' || ${c.id}`,
      sql`${commissionData} || jsonb_build_object('approved_at', ${at}::timestamptz)`,
      at,
    )}
    from ${commissions} ${c} where ${c.id} = ${commissionId}`;
}

/**
 * A select-list expression for the link-state statement (its updated link is `l`, with `was_active`):
 * `link.disabled` when this change turned the link off.
 */
export function linkDisabledWebhookColumn(at: string): SQL {
  const data = sql`jsonb_build_object('link_id', ${link.id}, 'program_id', ${link.programId},
    'partner_id', ${link.partnerId}, 'short_link', ${link.shortLink}, 'disabled_at', ${link.disabledAt})`;
  return sql`case when l.was_active and not ${link.isActive} then ${enqueueWebhook(
    link.programId,
    "link.disabled",
    sql`'link.disabled:' || ${link.id} || ':' || ${at}`,
    data,
    at,
  )} end as webhooks_enqueued`;
}
