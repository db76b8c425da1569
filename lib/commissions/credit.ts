import { type SQL, sql } from "drizzle-orm";

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
