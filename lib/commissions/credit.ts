import { type SQL, sql } from "drizzle-orm";
import type { CommissionPlan } from "./commission-policy.ts";

/**
 * Statements that credit an approved commission to its partner's balance, for inclusion in a write batch.
 * The ledger row is unique per commission and cause (`balance_ledger_commission_credit_once`), so a
 * commission can never be credited twice; the balance moves by the same amount in the same transaction.
 *
 * `commissionId` is an SQL expression naming the commission (its id, or a subquery when the commission is
 * inserted earlier in the same batch).
 */
export function creditCommissionStatements(commissionId: SQL, now: Date): SQL[] {
  const at = now.toISOString();
  return [
    sql`
      insert into balance_ledger (program_id, partner_id, currency, amount_cents, cause, commission_id, created_at)
      select c.program_id, c.partner_id, c.currency, c.amount_cents - c.deducted_cents, 'commission_credit', c.id,
             ${at}::timestamptz
      from commissions c where c.id = (${commissionId})`,
    sql`
      insert into partner_balances (program_id, partner_id, currency, balance_cents, updated_at)
      select c.program_id, c.partner_id, c.currency, c.amount_cents - c.deducted_cents, ${at}::timestamptz
      from commissions c where c.id = (${commissionId})
      on conflict (program_id, partner_id, currency) do update
        set balance_cents = partner_balances.balance_cents + excluded.balance_cents,
            updated_at = excluded.updated_at`,
    sql`
      update commissions set credited_at = ${at}::timestamptz, updated_at = ${at}::timestamptz
      where id = (${commissionId})`,
  ];
}

/**
 * The one commission insert: the planned commission of the sale `sale` (a condition on
 * `affiliate_sale_events s` naming exactly one sale) and, when it is approved at once, its ledger credit and
 * balance (`creditCommissionStatements`). Used by the sale write and by the scheduled repair.
 */
export function commissionInsertStatements(plan: CommissionPlan, sale: SQL, now: Date): SQL[] {
  const at = now.toISOString();
  const approved = plan.status === "approved";
  const statements = [
    sql`
      insert into commissions (sale_id, program_id, partner_id, customer_id, amount_cents, currency, status,
                               hold_until, approved_at, created_at, updated_at)
      select s.id, s.program_id, s.partner_id, s.customer_id, ${plan.amountCents}::bigint, ${plan.currency},
             ${plan.status}, ${plan.holdUntil?.toISOString() ?? null}::timestamptz,
             ${approved ? at : null}::timestamptz, ${at}::timestamptz, ${at}::timestamptz
      from affiliate_sale_events s where ${sale}`,
  ];
  if (approved) {
    const commissionId = sql`select c.id from commissions c join affiliate_sale_events s on s.id = c.sale_id
                             where ${sale}`;
    statements.push(...creditCommissionStatements(commissionId, now));
  }
  return statements;
}
