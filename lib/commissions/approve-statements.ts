import { type SQL, sql } from "drizzle-orm";
import { commissions } from "../../schema/commissions.ts";
import { columnName, fromDriver } from "../db/columns.ts";
import type { NotificationMessage } from "../notifications/message.ts";
import { commissionApprovedWebhookStatement } from "../webhooks/outbox-statements.ts";
import { creditCommissionStatement } from "./credit.ts";

/**
 * The approval of one pending commission, for one write batch: the status change guarded on the version
 * that was read (a concurrent change aborts the batch), the ledger's once-per-commission credit and the
 * balance, and the `commission.approved` webhook. Shared by the approval job and the fraud review's approve,
 * which also clears `needs_manual_review` (the job leaves it as it is).
 */
export function approveCommissionStatements(
  commissionId: string | number,
  expectedVersion: number,
  now: Date,
  options: { clearManualReview?: boolean } = {},
): SQL[] {
  const at = now.toISOString();
  const c = commissions;
  const id = sql`${commissionId}::bigint`;
  return [
    sql`
      with approved as (
        update ${c}
        set ${columnName(c.status)} = 'approved', ${columnName(c.approvedAt)} = ${at}::timestamptz,
            ${columnName(c.needsManualReview)} = ${c.needsManualReview} and not ${options.clearManualReview === true}::boolean,
            ${columnName(c.version)} = ${c.version} + 1, ${columnName(c.updatedAt)} = ${at}::timestamptz
        where ${c.id} = ${id} and ${c.status} = 'pending' and ${c.version} = ${expectedVersion}::int
        returning ${c.id})
      select guard(exists (select 1 from approved), 'commission changed meanwhile')`,
    creditCommissionStatement(id, at),
    commissionApprovedWebhookStatement(id, at),
  ];
}

/** The partner's notice of an approved commission (deduplicated per commission). */
export function commissionApprovedNotification(row: {
  id: string | number;
  program_id: number;
  partner_id: number;
  amount_cents: string | number;
  currency: string;
}): NotificationMessage {
  return {
    recipient_type: "partner",
    recipient_id: row.partner_id,
    program_id: row.program_id,
    kind: "commission_approved",
    payload: {
      commission_id: fromDriver(commissions.id, row.id),
      amount_cents: fromDriver(commissions.amountCents, row.amount_cents),
      currency: row.currency,
    },
    dedupe_key: `commission:${row.id}:approved`,
  };
}
