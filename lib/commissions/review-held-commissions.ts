import { type SQL, sql } from "drizzle-orm";
import { auditLog } from "../../schema/accounts.ts";
import { commissionCreditOnceIndex } from "../../schema/balances.ts";
import { commissions } from "../../schema/commissions.ts";
import { partners } from "../../schema/partners.ts";
import { requireProgramMembership } from "../auth/require-program-membership.ts";
import type { Database } from "../db/client.ts";
import { columnList, columnName, fromDriver } from "../db/columns.ts";
import { isGuardFailure, isUniqueViolation } from "../db/errors.ts";
import type { NotificationMessage } from "../notifications/message.ts";
import { commissionReviewRejectedWebhookStatement } from "../webhooks/outbox-statements.ts";
import { approveCommissionStatements, commissionApprovedNotification } from "./approve-statements.ts";

/**
 * The fraud review of commissions held under `hold_flagged_commissions` (pending, `needs_manual_review`), for an
 * owner or admin of the program's workspace (settings family). Approve is the approval job's write for one
 * commission; reject reverses it whole (as a refund reverses a pending commission: nothing was credited, so
 * no balance moves). Each decision is one transaction with its audit entry, guarded on the version read, and
 * the audit entry is what makes a repeated decision answer the same result instead of a conflict.
 */
export interface ReviewActor {
  userId: number;
  programId: number | undefined;
  commissionId: number | undefined;
  now: Date;
}

export const reviewDecisions = ["approve", "reject"] as const;
export type ReviewDecision = (typeof reviewDecisions)[number];

export type ReviewRefusal = {
  ok: false;
  reason: "no_access" | "not_manager" | "commission_not_found" | "not_held" | "invalid_decision";
};

export interface HeldCommissionView {
  id: number;
  sale_id: number;
  partner_id: number;
  partner_name: string;
  amount_cents: number;
  currency: string;
  fraud_flags: string[];
  hold_until: string | null;
  created_at: string;
}

export interface ReviewedCommission {
  id: number;
  decision: ReviewDecision;
  status: "approved" | "reversed";
  amount_cents: number;
  deducted_cents: number;
  currency: string;
}

/** The held list's bound: a review queue longer than this is read again after deciding some. */
export const HELD_LIST_LIMIT = 100;
const reviewedAction = "program.commission_reviewed";
const c = commissions;

type Allowed = { programId: number; advertiserId: number };

async function manager(db: Database, actor: ReviewActor): Promise<Allowed | ReviewRefusal> {
  const membership = await requireProgramMembership(db, actor.userId, actor.programId);
  if (!membership.ok || actor.programId === undefined) return { ok: false, reason: "no_access" };
  if (membership.role !== "owner" && membership.role !== "admin") return { ok: false, reason: "not_manager" };
  return { programId: actor.programId, advertiserId: membership.advertiserId };
}

export async function listHeldCommissions(
  db: Database,
  actor: ReviewActor,
): Promise<{ ok: true; commissions: HeldCommissionView[] } | ReviewRefusal> {
  const allowed = await manager(db, actor);
  if ("ok" in allowed) return allowed;
  const p = partners;
  const rows = await db.execute(sql`
    select ${c.id} as id, ${c.saleId} as sale_id, ${c.partnerId} as partner_id, ${p.name} as partner_name,
           ${c.amountCents} as amount_cents, ${c.currency} as currency, ${c.fraudFlags} as fraud_flags,
           ${c.holdUntil} as hold_until, ${c.createdAt} as created_at
    from ${c} join ${p} on ${p.id} = ${c.partnerId}
    where ${c.programId} = ${allowed.programId}::int and ${c.status} = 'pending' and ${c.needsManualReview}
    order by ${c.createdAt} desc, ${c.id} desc
    limit ${HELD_LIST_LIMIT}`);
  return {
    ok: true,
    commissions: rows.rows.map((row) => ({
      id: fromDriver(c.id, row.id),
      sale_id: fromDriver(c.saleId, row.sale_id),
      partner_id: fromDriver(c.partnerId, row.partner_id),
      partner_name: fromDriver(p.name, row.partner_name),
      amount_cents: fromDriver(c.amountCents, row.amount_cents),
      currency: fromDriver(c.currency, row.currency),
      fraud_flags: fromDriver(c.fraudFlags, row.fraud_flags),
      hold_until: row.hold_until === null ? null : fromDriver(c.holdUntil, row.hold_until).toISOString(),
      created_at: fromDriver(c.createdAt, row.created_at).toISOString(),
    })),
  };
}

interface CommissionState extends Record<string, unknown> {
  id: string;
  program_id: number;
  partner_id: number;
  amount_cents: string;
  deducted_cents: string;
  currency: string;
  status: string;
  needs_manual_review: boolean;
  version: number;
  reviewed_as: string | null;
}

/** The program's commission and the decision a review recorded for it, if any (its audit entry). */
async function readState(db: Database, programId: number, commissionId: number) {
  const a = auditLog;
  const result = await db.execute<CommissionState>(sql`
    select ${c.id} as id, ${c.programId} as program_id, ${c.partnerId} as partner_id,
           ${c.amountCents} as amount_cents, ${c.deductedCents} as deducted_cents, ${c.currency} as currency,
           ${c.status} as status, ${c.needsManualReview} as needs_manual_review, ${c.version} as version,
           (select ${a.changes} ->> 'decision' from ${a}
            where ${a.programId} = ${programId}::int and ${a.action} = ${reviewedAction}
              and ${a.changes} ->> 'commission_id' = ${String(commissionId)}
            order by ${a.createdAt} desc limit 1) as reviewed_as
    from ${c}
    where ${c.id} = ${commissionId}::bigint and ${c.programId} = ${programId}::int and not ${c.isTest}`);
  return result.rows[0];
}

function reviewedView(row: CommissionState, decision: ReviewDecision): ReviewedCommission {
  return {
    id: fromDriver(c.id, row.id),
    decision,
    status: decision === "approve" ? "approved" : "reversed",
    amount_cents: fromDriver(c.amountCents, row.amount_cents),
    deducted_cents:
      decision === "reject"
        ? fromDriver(c.amountCents, row.amount_cents)
        : fromDriver(c.deductedCents, row.deducted_cents),
    currency: row.currency,
  };
}

/** A held commission's reversal: deducted in full (never credited, so no ledger row and no balance move). */
function rejectStatements(row: CommissionState, at: string): SQL[] {
  return [
    sql`
      with rejected as (
        update ${c}
        set ${columnName(c.status)} = 'reversed', ${columnName(c.deductedCents)} = ${c.amountCents},
            ${columnName(c.needsManualReview)} = false,
            ${columnName(c.version)} = ${c.version} + 1, ${columnName(c.updatedAt)} = ${at}::timestamptz
        where ${c.id} = ${row.id}::bigint and ${c.status} = 'pending' and ${c.needsManualReview}
          and ${c.version} = ${row.version}::int
        returning ${c.id})
      select guard(exists (select 1 from rejected), 'commission changed meanwhile')`,
    commissionReviewRejectedWebhookStatement(sql`${row.id}::bigint`, at),
  ];
}

function auditStatement(
  allowed: Allowed,
  actor: ReviewActor,
  row: CommissionState,
  decision: ReviewDecision,
): SQL {
  const changes = {
    commission_id: String(fromDriver(c.id, row.id)),
    decision,
    status: { from: "pending", to: decision === "approve" ? "approved" : "reversed" },
  };
  const a = auditLog;
  return sql`
    insert into ${a} (${columnList(a.advertiserId, a.programId, a.actorUserId, a.action, a.changes, a.createdAt)})
    values (${allowed.advertiserId}::int, ${allowed.programId}::int, ${actor.userId}::int, ${reviewedAction},
            ${JSON.stringify(changes)}::jsonb, ${actor.now.toISOString()}::timestamptz)`;
}

export function parseDecision(body: unknown): ReviewDecision | undefined {
  const decision = (body as { decision?: unknown } | null)?.decision;
  return reviewDecisions.find((d) => d === decision);
}

/**
 * Decides one held commission. A decision that lost a race (the version guard or the credit's unique index)
 * is read again: the same decision taken meanwhile answers as this one would have, without a second credit.
 */
export async function reviewHeldCommission(
  db: Database,
  actor: ReviewActor,
  body: unknown,
): Promise<
  { ok: true; commission: ReviewedCommission; notifications: NotificationMessage[] } | ReviewRefusal
> {
  const allowed = await manager(db, actor);
  if ("ok" in allowed) return allowed;
  const decision = parseDecision(body);
  if (!decision) return { ok: false, reason: "invalid_decision" };
  if (actor.commissionId === undefined) return { ok: false, reason: "commission_not_found" };
  const row = await readState(db, allowed.programId, actor.commissionId);
  if (!row) return { ok: false, reason: "commission_not_found" };
  if (row.status !== "pending" || !row.needs_manual_review) return settled(row, decision);
  const at = actor.now.toISOString();
  const statements = [
    ...(decision === "approve"
      ? approveCommissionStatements(row.id, row.version, actor.now, { clearManualReview: true })
      : rejectStatements(row, at)),
    auditStatement(allowed, actor, row, decision),
  ];
  try {
    await db.batch(statements.map((s) => db.execute(s)) as [ReturnType<Database["execute"]>]);
  } catch (error) {
    if (!isGuardFailure(error) && !isUniqueViolation(error, commissionCreditOnceIndex)) throw error;
    const now = await readState(db, allowed.programId, actor.commissionId);
    if (!now) return { ok: false, reason: "commission_not_found" };
    return settled(now, decision);
  }
  const notifications = decision === "approve" ? [commissionApprovedNotification(row)] : [];
  return { ok: true, commission: reviewedView(row, decision), notifications };
}

/** A commission no longer held: the same decision recorded by a review answers the same; anything else is a conflict. */
function settled(
  row: CommissionState,
  decision: ReviewDecision,
): { ok: true; commission: ReviewedCommission; notifications: NotificationMessage[] } | ReviewRefusal {
  if (row.reviewed_as !== decision) return { ok: false, reason: "not_held" };
  return { ok: true, commission: reviewedView(row, decision), notifications: [] };
}
