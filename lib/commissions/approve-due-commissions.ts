import { sql } from "drizzle-orm";
import { commissionCreditOnceIndex } from "../../schema/balances.ts";
import { commissions } from "../../schema/commissions.ts";
import { saleEvents } from "../../schema/events.ts";
import { programs } from "../../schema/programs.ts";
import type { Database } from "../db/client.ts";
import { columnName } from "../db/columns.ts";
import { isGuardFailure, isUniqueViolation } from "../db/errors.ts";
import { rootLogger } from "../log.ts";
import type { NotificationMessage } from "../notifications/message.ts";
import { approveCommissionStatements, commissionApprovedNotification } from "./approve-statements.ts";

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
  const c = commissions;
  const due = await db.execute<DueRow>(sql`
    with ${holdFlaggedForReview(at)}
    select ${c.id} as id, ${c.programId} as program_id, ${c.partnerId} as partner_id,
           ${c.amountCents} as amount_cents, ${c.currency} as currency, ${c.version} as version
    from ${c}
    where ${c.status} = 'pending' and ${c.holdUntil} <= ${at}::timestamptz and not ${c.isTest}
      and not ${heldForFraudReview}
    order by ${c.holdUntil}, ${c.id}
    limit ${limit}`);
  const notifications: NotificationMessage[] = [];
  for (const row of due.rows) {
    const statements = approveCommissionStatements(row.id, row.version, now);
    try {
      await db.batch(statements.map((s) => db.execute(s)) as [ReturnType<Database["execute"]>]);
    } catch (error) {
      // Another run approved it, or a refund changed it meanwhile: nothing to do for this one.
      if (isGuardFailure(error) || isUniqueViolation(error, commissionCreditOnceIndex)) continue;
      // A lost answer (connection cut after the commit) looks like any failure: whether this run's
      // approval committed is read back, so a committed one still gets its notification (the next run
      // would not see it as due any more).
      if (!(await approvedBy(db, row.id, at))) {
        rootLogger.error("commission approval failed", error, { commission_id: row.id });
        continue;
      }
    }
    notifications.push(commissionApprovedNotification(row));
  }
  return { approved: notifications.length, notifications };
}

/**
 * Under the program's `hold_flagged_commissions`, a commission whose sale the fraud scan has not looked at yet
 * (`lib/fraud/`), or found signals on, is not approved (in `commissions`' scope).
 */
const heldForFraudReview = sql`exists (
  select 1 from ${programs} join ${saleEvents} on ${saleEvents.id} = ${commissions.saleId}
  where ${programs.id} = ${commissions.programId} and ${programs.holdFlaggedCommissions}
    and (${saleEvents.fraudScannedAt} is null or cardinality(${saleEvents.fraudFlags}) > 0))`;

/**
 * Marks for review (`needs_manual_review`) the due commissions that the program holds because their sale is
 * flagged; they stay `pending`, uncredited, until someone decides. A CTE of the due read (no added round trip);
 * idempotent: a marked one is not marked again.
 */
function holdFlaggedForReview(at: string) {
  const c = commissions;
  return sql`held_for_review as (
    update ${c}
    set ${columnName(c.needsManualReview)} = true, ${columnName(c.version)} = ${c.version} + 1,
        ${columnName(c.updatedAt)} = ${at}::timestamptz
    where ${c.status} = 'pending' and ${c.holdUntil} <= ${at}::timestamptz and not ${c.isTest}
      and not ${c.needsManualReview}
      and exists (
        select 1 from ${programs} join ${saleEvents} on ${saleEvents.id} = ${c.saleId}
        where ${programs.id} = ${c.programId} and ${programs.holdFlaggedCommissions}
          and ${saleEvents.fraudScannedAt} is not null and cardinality(${saleEvents.fraudFlags}) > 0)
    returning ${c.id})`;
}

/** Whether the commission was approved by the run at `at` (false when even that cannot be read). */
async function approvedBy(db: Database, commissionId: string, at: string): Promise<boolean> {
  try {
    const c = commissions;
    const result = await db.execute<{ approved: boolean }>(sql`
      select (${c.status} = 'approved' and ${c.approvedAt} = ${at}::timestamptz) as approved
      from ${c} where ${c.id} = ${commissionId}::bigint`);
    return result.rows[0]?.approved === true;
  } catch (error) {
    rootLogger.error("commission approval outcome unknown", error, { commission_id: commissionId });
    return false;
  }
}
