import { type Placeholder, type SQL, sql } from "drizzle-orm";
import { alias } from "drizzle-orm/pg-core";
import { commissions, refunds } from "../../schema/commissions.ts";
import { leadEvents, saleEvents } from "../../schema/events.ts";
import { referralLinks } from "../../schema/partners.ts";

/**
 * The statements the use cases add to their OWN transaction (no extra round trip): each calls the database
 * function `webhook_enqueue` (migration 0017), which writes the event and one delivery per subscribed,
 * enabled endpoint, deduplicated by a key naming the change (a retried batch writes one event), and swallows
 * its own failure so a webhook can never fail the change it reports. A program without endpoints pays one
 * indexed lookup. The cron then hands the deliveries to the queue (`dispatch-due.ts`).
 */

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
    select webhook_enqueue(${s.programId}, 'sale.created', 'sale.created:' || ${s.id}, ${saleData}, ${at}::timestamptz)
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
    select webhook_enqueue(${c.programId}, 'commission.created', 'commission.created:' || ${c.id}, ${commissionData},
                           ${at}::timestamptz)
    from ${saleEvents} ${s} join ${commissions} ${c} on ${c.saleId} = ${s.id} where ${saleKey}`;
}

/**
 * The `webhook_enqueue` call of `lead.created` for the lead row `l`: a row of the table, or the lead event's
 * insert returning its row under the name `l` (the lead's kept-plan insert, `lib/tracking/lead/lead-store.ts`).
 */
export function leadCreatedWebhook(at: string | Placeholder): SQL {
  return sql`webhook_enqueue(${l.programId}, 'lead.created', 'lead.created:' || ${l.id}, jsonb_build_object(
             'lead_id', ${l.id}, 'program_id', ${l.programId}, 'partner_id', ${l.partnerId}, 'customer_id', ${l.customerId},
             'click_id', ${l.clickId}, 'customer_key', ${l.customerKey}, 'event_name', ${l.eventName},
             'provisional', ${l.provisional}, 'is_test', ${l.isTest}, 'created_at', ${l.createdAt}), ${at}::timestamptz)`;
}

/** `commission.updated` after a refund or reversal, with the refund's amounts; `refundRow` is its id. */
export function commissionRefundedWebhookStatement(
  commissionId: number | Placeholder,
  refundRow: SQL,
  at: string | Placeholder,
): SQL {
  return sql`
    select webhook_enqueue(${c.programId}, 'commission.updated', 'commission.updated:refund:' || ${r.id},
             ${commissionData} || jsonb_build_object('reason', ${r.reason}, 'refund', jsonb_build_object(
               'refund_id', ${r.refundId}, 'amount_cents', ${r.amountCents},
               'refunded_total_cents', ${r.refundedTotalCents}, 'deduction_cents', ${r.deductionCents})),
             ${at}::timestamptz)
    from ${commissions} ${c}, ${refunds} ${r} where ${c.id} = ${commissionId}::bigint and ${r.id} = ${refundRow}`;
}

/**
 * `commission.updated` when a fraud review rejects a held commission (reversed whole), in the shape a refund's
 * has, its reason `fraud_review` and no refund; one event per commission.
 */
export function commissionReviewRejectedWebhookStatement(commissionId: SQL, at: string): SQL {
  return sql`
    select webhook_enqueue(${c.programId}, 'commission.updated', 'commission.updated:review:' || ${c.id},
             ${commissionData} || jsonb_build_object('reason', 'fraud_review', 'refund', null), ${at}::timestamptz)
    from ${commissions} ${c} where ${c.id} = ${commissionId}`;
}

/** `commission.approved` when its hold ended (the approval job's transaction). */
export function commissionApprovedWebhookStatement(commissionId: SQL, at: string): SQL {
  return sql`
    select webhook_enqueue(${c.programId}, 'commission.approved', 'commission.approved:' || ${c.id},
             ${commissionData} || jsonb_build_object('approved_at', ${at}::timestamptz), ${at}::timestamptz)
    from ${commissions} ${c} where ${c.id} = ${commissionId}`;
}

/**
 * A select-list expression for the link-state statement (its updated link is `l`, with `was_active`):
 * `link.disabled` when this change turned the link off.
 */
export function linkDisabledWebhookColumn(at: string): SQL {
  return sql`case when l.was_active and not ${link.isActive} then webhook_enqueue(${link.programId}, 'link.disabled',
    'link.disabled:' || ${link.id} || ':' || ${at}, jsonb_build_object('link_id', ${link.id}, 'program_id', ${link.programId},
    'partner_id', ${link.partnerId}, 'short_link', ${link.shortLink}, 'disabled_at', ${link.disabledAt}), ${at}::timestamptz)
    end as webhooks_enqueued`;
}
