import { type SQL, sql } from "drizzle-orm";
import { alias } from "drizzle-orm/pg-core";
import { commissions, refunds } from "../../schema/commissions.ts";
import { clickEvents, leadEvents, saleEvents } from "../../schema/events.ts";
import { partners, referralLinks } from "../../schema/partners.ts";
import type { Database } from "../db/client.ts";
import { fromDriver, fromDriverOrNull } from "../db/columns.ts";
import {
  type EventCursor,
  type EventKind,
  type EventMode,
  type EventsQuery,
  encodeCursor,
  kindRank,
} from "./events-query.ts";

/** One entry of the feed; fields that do not apply to the kind are null. */
export interface FeedEvent {
  kind: EventKind;
  /** The row id in its kind's table (with `kind`, unique). */
  id: number;
  created_at: string;
  test: boolean;
  partner: { id: number; name: string } | null;
  click_id: string | null;
  link: string | null;
  landing_page: string | null;
  customer_key: string | null;
  event_name: string | null;
  provisional: boolean | null;
  amount_cents: number | null;
  currency: string | null;
  transaction_id: string | null;
  reason: string | null;
  /** Lead and sale: the fraud signal codes stored on the row; empty for clicks, refunds and unflagged rows. */
  fraud_flags: string[];
  /** Sale: its commission's fraud signal codes (empty without a commission or flags); null for other kinds. */
  commission_fraud_flags: string[] | null;
}

export interface EventsPage {
  program_id: number;
  events: FeedEvent[];
  next_cursor: string | null;
}

function modeCondition(isTest: SQL, mode: EventMode): SQL {
  if (mode === "live") return sql`not ${isTest}`;
  if (mode === "test") return sql`${isTest}`;
  return sql`true`;
}

/** Strictly after the cursor in the feed's order (created_at desc, kind rank desc, id desc). */
function afterCursor(createdAt: SQL, id: SQL, kind: EventKind, cursor: EventCursor | null): SQL {
  if (!cursor) return sql`true`;
  const at = sql`${cursor.at}::timestamptz`;
  const rank = kindRank[kind];
  const cursorRank = kindRank[cursor.kind];
  const sameInstant =
    rank < cursorRank ? sql`true` : rank === cursorRank ? sql`${id} < ${cursor.id}` : sql`false`;
  return sql`(${createdAt} <= ${at} and (${createdAt} < ${at} or ${sameInstant}))`;
}

/**
 * Each kind's newest `take` rows through its (program_id, created_at) index (live or test; migration 0016
 * adds the test-click index and the refunds' program), merged and cut in the outer query. One statement.
 */
function kindQuery(kind: EventKind, programId: number, q: EventsQuery, take: number): SQL {
  const common = (createdAt: SQL, id: SQL, isTest: SQL) =>
    sql`${modeCondition(isTest, q.mode)} and ${afterCursor(createdAt, id, kind, q.cursor)}
        order by ${createdAt} desc, ${id} desc limit ${take}::int`;
  const rank = kindRank[kind];
  switch (kind) {
    case "click":
      return sql`(select 'click'::text as kind, ${rank}::int as rank, ${clickEvents.id} as id,
          ${clickEvents.createdAt} as created_at, ${clickEvents.isTest} as is_test, ${clickEvents.partnerId} as partner_id,
          ${clickEvents.linkId} as link_id, ${clickEvents.clickId} as click_id, ${clickEvents.landingPage} as landing_page,
          null::text as customer_key, null::text as event_name, null::boolean as provisional,
          null::bigint as amount_cents, null::text as currency, null::text as transaction_id, null::text as reason,
          '{}'::text[] as fraud_flags, null::text[] as commission_fraud_flags
        from ${clickEvents} where ${clickEvents.programId} = ${programId}::int
          and ${common(sql`${clickEvents.createdAt}`, sql`${clickEvents.id}`, sql`${clickEvents.isTest}`)})`;
    case "lead":
      return sql`(select 'lead'::text as kind, ${rank}::int as rank, ${leadEvents.id} as id,
          ${leadEvents.createdAt} as created_at, ${leadEvents.isTest} as is_test, ${leadEvents.partnerId} as partner_id,
          null::int as link_id, ${leadEvents.clickId} as click_id, null::text as landing_page,
          ${leadEvents.customerKey} as customer_key, ${leadEvents.eventName} as event_name,
          ${leadEvents.provisional} as provisional, null::bigint as amount_cents, null::text as currency,
          null::text as transaction_id, null::text as reason, ${leadEvents.fraudFlags} as fraud_flags,
          null::text[] as commission_fraud_flags
        from ${leadEvents} where ${leadEvents.programId} = ${programId}::int
          and ${common(sql`${leadEvents.createdAt}`, sql`${leadEvents.id}`, sql`${leadEvents.isTest}`)})`;
    case "sale":
      return sql`(select 'sale'::text as kind, ${rank}::int as rank, ${saleEvents.id} as id,
          ${saleEvents.createdAt} as created_at, ${saleEvents.isTest} as is_test, ${saleEvents.partnerId} as partner_id,
          null::int as link_id, null::text as click_id, null::text as landing_page, null::text as customer_key,
          null::text as event_name, null::boolean as provisional, ${saleEvents.amountCents} as amount_cents,
          ${saleEvents.currency} as currency, ${saleEvents.processorEventId} as transaction_id, null::text as reason,
          ${saleEvents.fraudFlags} as fraud_flags,
          coalesce((select ${commissions.fraudFlags} from ${commissions} where ${commissions.saleId} = ${saleEvents.id}),
                   '{}'::text[]) as commission_fraud_flags
        from ${saleEvents} where ${saleEvents.programId} = ${programId}::int
          and ${common(sql`${saleEvents.createdAt}`, sql`${saleEvents.id}`, sql`${saleEvents.isTest}`)})`;
    case "refund": {
      const r = alias(refunds, "r");
      const s = alias(saleEvents, "s");
      return sql`(select 'refund'::text as kind, ${rank}::int as rank, ${r.id} as id, ${r.createdAt} as created_at,
          ${s.isTest} as is_test, ${s.partnerId} as partner_id, null::int as link_id, null::text as click_id,
          null::text as landing_page, null::text as customer_key, null::text as event_name,
          null::boolean as provisional, ${r.amountCents} as amount_cents, ${s.currency} as currency,
          ${s.processorEventId} as transaction_id, ${r.reason} as reason, '{}'::text[] as fraud_flags,
          null::text[] as commission_fraud_flags
        from ${refunds} ${r} join ${saleEvents} ${s} on ${s.id} = ${r.saleId}
        where ${r.programId} = ${programId}::int
          and ${common(sql`${r.createdAt}`, sql`${r.id}`, sql`${s.isTest}`)})`;
    }
  }
}

/**
 * A row of the merged feed. Text and boolean columns arrive as the driver types them; the numeric ones are
 * read through a column that feeds them (ids are every events table's bigint key, amounts bigint cents).
 */
type FeedRow = {
  kind: EventKind;
  id: unknown;
  at_text: string;
  is_test: boolean;
  partner_id: unknown;
  partner_name: string | null;
  click_id: string | null;
  link: string | null;
  landing_page: string | null;
  customer_key: string | null;
  event_name: string | null;
  provisional: boolean | null;
  amount_cents: unknown;
  currency: string | null;
  transaction_id: string | null;
  reason: string | null;
  fraud_flags: unknown;
  commission_fraud_flags: unknown;
};

/** The feed use case: one read. Newest first across the kinds asked for; `next_cursor` when more remain. */
export async function readRecentEvents(db: Database, programId: number, q: EventsQuery): Promise<EventsPage> {
  const take = q.limit + 1;
  const union = sql.join(
    q.kinds.map((kind) => kindQuery(kind, programId, q, take)),
    sql` union all `,
  );
  const result = await db.execute<FeedRow>(sql`
    select e.*, to_char(e.created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as at_text,
           ${partners.name} as partner_name, ${referralLinks.shortLink} as link
    from (${union}) e
    left join ${partners} on ${partners.id} = e.partner_id
    left join ${referralLinks} on ${referralLinks.id} = e.link_id
    order by e.created_at desc, e.rank desc, e.id desc
    limit ${take}::int`);
  const rows = result.rows;
  const page = rows.slice(0, q.limit);
  const events = page.map((row): FeedEvent => {
    const partnerId = fromDriverOrNull(saleEvents.partnerId, row.partner_id);
    return {
      kind: row.kind,
      id: fromDriver(saleEvents.id, row.id),
      created_at: new Date(row.at_text).toISOString(),
      test: row.is_test === true,
      partner: partnerId === null ? null : { id: partnerId, name: row.partner_name ?? "" },
      click_id: row.click_id,
      link: row.link,
      landing_page: row.landing_page,
      customer_key: row.customer_key,
      event_name: row.event_name,
      provisional: row.provisional,
      amount_cents: fromDriverOrNull(saleEvents.amountCents, row.amount_cents),
      currency: row.currency,
      transaction_id: row.transaction_id,
      reason: row.reason,
      fraud_flags: fromDriver(leadEvents.fraudFlags, row.fraud_flags),
      commission_fraud_flags:
        row.commission_fraud_flags === null
          ? null
          : fromDriver(commissions.fraudFlags, row.commission_fraud_flags),
    };
  });
  const last = page[page.length - 1];
  const nextCursor =
    rows.length > q.limit && last
      ? encodeCursor({ at: last.at_text, kind: last.kind, id: fromDriver(saleEvents.id, last.id) })
      : null;
  return { program_id: programId, events, next_cursor: nextCursor };
}
