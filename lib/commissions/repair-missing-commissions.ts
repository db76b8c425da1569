import { type SQL, sql } from "drizzle-orm";
import { alias } from "drizzle-orm/pg-core";
import { commissionSaleUniqueIndex, commissions } from "../../schema/commissions.ts";
import { saleEvents } from "../../schema/events.ts";
import { type CommissionType, commissionRules, programs } from "../../schema/programs.ts";
import type { Database } from "../db/client.ts";
import { columnName, fromDriver } from "../db/columns.ts";
import { isGuardFailure, isUniqueViolation } from "../db/errors.ts";
import { rootLogger } from "../log.ts";
import { type Currency, isSupportedCurrency } from "../money.ts";
import { commissionCreatedWebhookStatement } from "../webhooks/outbox-statements.ts";
import { planCommission, policyFor } from "./commission-policy.ts";
import { commissionInsertStatements } from "./credit.ts";

interface PendingSaleRow extends Record<string, unknown> {
  id: string;
  program_id: number;
  amount_cents: string;
  currency: string;
  created_at: string;
  commission_type: CommissionType;
  commission_rate: string;
  duration_months: number;
  hold_days: number;
  rule_type: CommissionType | null;
  rule_rate: string | null;
  rule_duration: number | null;
}

/**
 * The sale endpoint's "Failed to create commission" path stores the sale flagged `needs_commission`, and so
 * does the provider's events' duplicate reversal for the sale endpoint's sale whose one-time commission the
 * reversed duplicate had held (`flagKeptSaleForCommission`). This job (run by the cron trigger) creates those
 * commissions with the same policy code, as of the sale's own time (the hold period counts from the sale),
 * and clears the flag in the same transaction. Whoever flagged the sale decided that it earns a commission,
 * so that is not re-decided here.
 * Safe to run twice at once: the flag is cleared under a guard and a sale has at most one commission.
 */
export async function repairMissingCommissions(db: Database, now: Date, limit = 100): Promise<number> {
  // The sale is `s` throughout: the commission insert and its webhook select it so.
  const s = alias(saleEvents, "s");
  const p = programs;
  const r = commissionRules;
  const pending = await db.execute<PendingSaleRow>(sql`
    select ${s.id} as id, ${s.programId} as program_id, ${s.amountCents} as amount_cents, ${s.currency} as currency,
           ${s.createdAt} as created_at,
           ${p.commissionType} as commission_type, ${p.commissionRate} as commission_rate,
           ${p.durationMonths} as duration_months, ${p.holdDays} as hold_days,
           ${r.commissionType} as rule_type, ${r.commissionRate} as rule_rate, ${r.durationMonths} as rule_duration
    from ${saleEvents} ${s}
    join ${p} on ${p.id} = ${s.programId}
    left join ${r} on ${r.programId} = ${s.programId} and ${r.productId} = ${s.productId}
    where ${s.needsCommission} and not ${s.isTest} and ${s.partnerId} is not null
    order by ${s.id}
    limit ${limit}`);
  let repaired = 0;
  for (const row of pending.rows) {
    if (!isSupportedCurrency(row.currency)) continue;
    const policy = policyFor(
      {
        commissionType: row.commission_type,
        commissionRate: row.commission_rate,
        durationMonths: row.duration_months,
      },
      row.rule_type && row.rule_rate
        ? { commissionType: row.rule_type, commissionRate: row.rule_rate, durationMonths: row.rule_duration }
        : null,
    );
    const saleTime = fromDriver(s.createdAt, row.created_at);
    const plan = planCommission(
      policy,
      { amountCents: fromDriver(s.amountCents, row.amount_cents), currency: row.currency as Currency },
      row.hold_days,
      saleTime,
    );
    const statements: SQL[] = [
      sql`
        with cleared as (
          update ${saleEvents} set ${columnName(saleEvents.needsCommission)} = false
           where ${saleEvents.id} = ${row.id}::bigint and ${saleEvents.needsCommission}
          returning ${saleEvents.id})
        select guard(exists (select 1 from cleared), 'commission repaired meanwhile')`,
      ...commissionInsertStatements(plan, sql`${s.id} = ${row.id}::bigint`, now),
      // The brand hears of the commission when it exists, in the transaction that creates it.
      commissionCreatedWebhookStatement(sql`${s.id} = ${row.id}::bigint`, now.toISOString()),
    ];
    try {
      await db.batch(
        statements.map((statement) => db.execute(statement)) as [ReturnType<Database["execute"]>],
      );
      repaired++;
    } catch (error) {
      // Another run repaired it first: nothing to do.
      if (isGuardFailure(error)) continue;
      // The sale has its commission but is still flagged (a flag set while that commission was being
      // created: an update waiting on the sale's row re-checks the row, not the commissions its snapshot
      // missed). The flag alone goes, or every later run would fail the same way and every refund of the
      // sale answer 500 as if its commission were still missing.
      if (isUniqueViolation(error, commissionSaleUniqueIndex)) {
        await clearFlagOfCommissionedSale(db, row.id);
        continue;
      }
      // Anything else is logged and retried on the next run.
      rootLogger.error("commission repair failed", error, { sale_id: row.id });
    }
  }
  return repaired;
}

/** Clears `needs_commission` of a sale that has its commission: there is nothing left to repair. */
async function clearFlagOfCommissionedSale(db: Database, saleId: string): Promise<void> {
  await db.execute(sql`
    update ${saleEvents} set ${columnName(saleEvents.needsCommission)} = false
    where ${saleEvents.id} = ${saleId}::bigint and ${saleEvents.needsCommission}
      and exists (select 1 from ${commissions} where ${commissions.saleId} = ${saleId}::bigint)`);
}
