import { sql } from "drizzle-orm";
import type { Database } from "../db/client.ts";
import { isGuardFailure, isUniqueViolation } from "../db/errors.ts";
import { rootLogger } from "../log.ts";
import type { NotificationMessage } from "../notifications/message.ts";
import { commissionApprovedWebhookStatement } from "../webhooks/outbox-statements.ts";
import { creditCommissionStatements } from "./credit.ts";

interface DueRow extends Record<string, unknown> {
  id: string;
  program_id: number;
  partner_id: number;
  amount_cents: string;
  currency: string;
  version: number;
}

/**
 * Approves `pending` commissions whose hold period has ended and credits each to its partner, exactly
 * once: the status change is guarded on the version that was read, and the credit's ledger row is unique
 * per commission, so two runs at the same time (or a retried run) cannot credit twice. Returns the
 * partner notifications to send.
 */
export async function approveDueCommissions(
  db: Database,
  now: Date,
  limit = 200,
): Promise<{ approved: number; notifications: NotificationMessage[] }> {
  const at = now.toISOString();
  const due = await db.execute<DueRow>(sql`
    with ${holdFlaggedForReview(at)}
    select id, program_id, partner_id, amount_cents, currency, version
    from commissions
    where status = 'pending' and hold_until <= ${at}::timestamptz and not is_test
      and not ${heldForFraudReview}
    order by hold_until, id
    limit ${limit}`);
  const notifications: NotificationMessage[] = [];
  for (const row of due.rows) {
    const statements = [
      sql`
        with approved as (
          update commissions
          set status = 'approved', approved_at = ${at}::timestamptz, version = version + 1, updated_at = ${at}::timestamptz
          where id = ${row.id}::bigint and status = 'pending' and version = ${row.version}::int
          returning id)
        select guard(exists (select 1 from approved), 'commission changed meanwhile')`,
      ...creditCommissionStatements(sql`${row.id}::bigint`, now),
      commissionApprovedWebhookStatement(sql`${row.id}::bigint`, at),
    ];
    try {
      await db.batch(statements.map((s) => db.execute(s)) as [ReturnType<Database["execute"]>]);
    } catch (error) {
      // Another run approved it, or a refund changed it meanwhile: nothing to do for this one.
      if (isGuardFailure(error) || isUniqueViolation(error, "balance_ledger_commission_credit_once"))
        continue;
      // A lost answer (connection cut after the commit) looks like any failure: whether this run's
      // approval committed is read back, so a committed one still gets its notification (the next run
      // would not see it as due any more).
      if (!(await approvedBy(db, row.id, at))) {
        rootLogger.error("commission approval failed", error, { commission_id: row.id });
        continue;
      }
    }
    notifications.push({
      recipient_type: "partner",
      recipient_id: row.partner_id,
      program_id: row.program_id,
      kind: "commission_approved",
      payload: {
        commission_id: Number(row.id),
        amount_cents: Number(row.amount_cents),
        currency: row.currency,
      },
      dedupe_key: `commission:${row.id}:approved`,
    });
  }
  return { approved: notifications.length, notifications };
}

/**
 * Under the program's `hold_flagged_commissions`, a commission whose sale the fraud scan has not looked at yet
 * (`lib/fraud/`), or found signals on, is not approved (in `commissions`' scope).
 */
const heldForFraudReview = sql`exists (
  select 1 from programs p join affiliate_sale_events s on s.id = commissions.sale_id
  where p.id = commissions.program_id and p.hold_flagged_commissions
    and (s.fraud_scanned_at is null or cardinality(s.fraud_flags) > 0))`;

/**
 * Marks for review (`needs_manual_review`) the due commissions that the program holds because their sale is
 * flagged; they stay `pending`, uncredited, until someone decides. A CTE of the due read (no added round trip);
 * idempotent: a marked one is not marked again.
 */
function holdFlaggedForReview(at: string) {
  return sql`held_for_review as (
    update commissions
    set needs_manual_review = true, version = version + 1, updated_at = ${at}::timestamptz
    where status = 'pending' and hold_until <= ${at}::timestamptz and not is_test and not needs_manual_review
      and exists (
        select 1 from programs p join affiliate_sale_events s on s.id = commissions.sale_id
        where p.id = commissions.program_id and p.hold_flagged_commissions
          and s.fraud_scanned_at is not null and cardinality(s.fraud_flags) > 0)
    returning id)`;
}

/** Whether the commission was approved by the run at `at` (false when even that cannot be read). */
async function approvedBy(db: Database, commissionId: string, at: string): Promise<boolean> {
  try {
    const result = await db.execute<{ approved: boolean }>(sql`
      select (status = 'approved' and approved_at = ${at}::timestamptz) as approved
      from commissions where id = ${commissionId}::bigint`);
    return result.rows[0]?.approved === true;
  } catch (error) {
    rootLogger.error("commission approval outcome unknown", error, { commission_id: commissionId });
    return false;
  }
}
