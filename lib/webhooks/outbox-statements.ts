import { type SQL, sql } from "drizzle-orm";

/**
 * The statements the use cases add to their OWN transaction (no extra round trip): each calls the database
 * function `webhook_enqueue` (migration 0017), which writes the event and one delivery per subscribed,
 * enabled endpoint, deduplicated by a key naming the change (a retried batch writes one event), and swallows
 * its own failure so a webhook can never fail the change it reports. A program without endpoints pays one
 * indexed lookup. The cron then hands the deliveries to the queue (`dispatch-due.ts`).
 */

const saleData = sql`jsonb_build_object(
  'sale_id', s.id, 'program_id', s.program_id, 'partner_id', s.partner_id, 'customer_id', s.customer_id,
  'transaction_id', s.processor_event_id, 'amount_cents', s.amount_cents, 'tax_cents', s.tax_cents,
  'currency', s.currency, 'product_id', s.product_id, 'is_test', s.is_test, 'created_at', s.created_at)`;

const commissionData = sql`jsonb_build_object(
  'commission_id', c.id, 'sale_id', c.sale_id, 'program_id', c.program_id, 'partner_id', c.partner_id,
  'status', c.status, 'amount_cents', c.amount_cents, 'deducted_cents', c.deducted_cents,
  'net_amount_cents', c.amount_cents - c.deducted_cents, 'currency', c.currency, 'hold_until', c.hold_until,
  'is_test', c.is_test)`;

/** `sale.created` and, when the batch wrote one, `commission.created`; `saleKey` selects the sale as `s`. */
export function saleWebhooksStatement(saleKey: SQL, at: string): SQL {
  return sql`
    select webhook_enqueue(s.program_id, 'sale.created', 'sale.created:' || s.id, ${saleData}, ${at}::timestamptz)
    from affiliate_sale_events s where ${saleKey}
    union all
    ${commissionCreatedWebhookStatement(saleKey, at)}`;
}

/**
 * `commission.created` for the sale's commission, when the batch wrote one: the sale's own write, and the
 * scheduled repair of a sale whose commission failed at first. `saleKey` selects the sale as `s`.
 */
export function commissionCreatedWebhookStatement(saleKey: SQL, at: string): SQL {
  return sql`
    select webhook_enqueue(c.program_id, 'commission.created', 'commission.created:' || c.id, ${commissionData},
                           ${at}::timestamptz)
    from affiliate_sale_events s join commissions c on c.sale_id = s.id where ${saleKey}`;
}

/** `lead.created` for the lead event the same batch has just inserted (its id is the sequence's current value). */
export function leadWebhookStatement(at: string): SQL {
  return sql`
    select webhook_enqueue(l.program_id, 'lead.created', 'lead.created:' || l.id, jsonb_build_object(
             'lead_id', l.id, 'program_id', l.program_id, 'partner_id', l.partner_id, 'customer_id', l.customer_id,
             'click_id', l.click_id, 'customer_key', l.customer_key, 'event_name', l.event_name,
             'provisional', l.provisional, 'is_test', l.is_test, 'created_at', l.created_at), ${at}::timestamptz)
    from affiliate_lead_events l
    -- currval in a scalar subquery is evaluated once (an init plan), so the lookup is the primary key's;
    -- compared per row, a volatile function forces a sequential scan of every lead.
    where l.id = (select currval(pg_get_serial_sequence('affiliate_lead_events', 'id')))`;
}

/** `commission.updated` after a refund or reversal, with the refund's amounts; `refundRow` is its id. */
export function commissionRefundedWebhookStatement(commissionId: number, refundRow: SQL, at: string): SQL {
  return sql`
    select webhook_enqueue(c.program_id, 'commission.updated', 'commission.updated:refund:' || r.id,
             ${commissionData} || jsonb_build_object('reason', r.reason, 'refund', jsonb_build_object(
               'refund_id', r.refund_id, 'amount_cents', r.amount_cents,
               'refunded_total_cents', r.refunded_total_cents, 'deduction_cents', r.deduction_cents)),
             ${at}::timestamptz)
    from commissions c, refunds r where c.id = ${commissionId}::bigint and r.id = ${refundRow}`;
}

/** `commission.approved` when its hold ended (the approval job's transaction). */
export function commissionApprovedWebhookStatement(commissionId: SQL, at: string): SQL {
  return sql`
    select webhook_enqueue(c.program_id, 'commission.approved', 'commission.approved:' || c.id,
             ${commissionData} || jsonb_build_object('approved_at', ${at}::timestamptz), ${at}::timestamptz)
    from commissions c where c.id = ${commissionId}`;
}

/**
 * A select-list expression for the link-state statement (its updated link is `l`, with `was_active`):
 * `link.disabled` when this change turned the link off.
 */
export function linkDisabledWebhookColumn(at: string): SQL {
  return sql`case when l.was_active and not l.is_active then webhook_enqueue(l.program_id, 'link.disabled',
    'link.disabled:' || l.id || ':' || ${at}, jsonb_build_object('link_id', l.id, 'program_id', l.program_id,
    'partner_id', l.partner_id, 'short_link', l.short_link, 'disabled_at', l.disabled_at), ${at}::timestamptz)
    end as webhooks_enqueued`;
}
