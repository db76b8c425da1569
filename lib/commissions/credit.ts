import { type Placeholder, type SQL, sql } from "drizzle-orm";
import { alias } from "drizzle-orm/pg-core";
import { balanceLedger, partnerBalances } from "../../schema/balances.ts";
import { commissions } from "../../schema/commissions.ts";
import { saleEvents } from "../../schema/events.ts";
import { columnList, columnName } from "../db/columns.ts";
import type { CommissionPlan } from "./commission-policy.ts";

const c = alias(commissions, "c");
/** The sale as `s`: the callers' `sale` condition names it so. */
const s = alias(saleEvents, "s");

/**
 * The statement that credits an approved commission to its partner's balance, for inclusion in a write
 * batch: the ledger row, the balance and the commission's `credited_at`, in one statement (one round of
 * handling for the database, the SQL endpoint and the worker, where three were). The ledger row is unique
 * per commission and cause (`commissionCreditOnceIndex`), so a commission can never be credited twice; the
 * balance moves by the same amount in the same statement.
 *
 * `commissionId` is an SQL expression naming the commission (its id, or a subquery when the commission is
 * inserted earlier in the same batch).
 */
export function creditCommissionStatement(commissionId: SQL, at: string | Placeholder): SQL {
  const bl = balanceLedger;
  const pb = partnerBalances;
  const balanceCents = columnName(pb.balanceCents);
  const updatedAt = columnName(pb.updatedAt);
  return sql`
    with credit as (
      select ${c.id} as id, ${c.programId} as program_id, ${c.partnerId} as partner_id, ${c.currency} as currency,
             ${c.amountCents} - ${c.deductedCents} as cents
      from ${commissions} ${c} where ${c.id} = (${commissionId})),
    ledger as (
      insert into ${bl} (${columnList(bl.programId, bl.partnerId, bl.currency, bl.amountCents, bl.cause, bl.commissionId, bl.createdAt)})
      select program_id, partner_id, currency, cents, 'commission_credit', id, ${at}::timestamptz from credit),
    balance as (
      insert into ${pb} (${columnList(pb.programId, pb.partnerId, pb.currency, pb.balanceCents, pb.updatedAt)})
      select program_id, partner_id, currency, cents, ${at}::timestamptz from credit
      on conflict (${columnList(pb.programId, pb.partnerId, pb.currency)}) do update
        set ${balanceCents} = ${pb.balanceCents} + excluded.${balanceCents},
            ${updatedAt} = excluded.${updatedAt}),
    marked as (
      update ${commissions} set ${columnName(commissions.creditedAt)} = ${at}::timestamptz,
                                ${columnName(commissions.updatedAt)} = ${at}::timestamptz
      where ${commissions.id} in (select id from credit))
    select count(*)::int as credited from credit`;
}

/** A commission's row as planned, for `commissionInsert`: values, or placeholders of a kept-plan statement. */
export interface CommissionValues {
  amountCents: number | Placeholder;
  currency: string | Placeholder;
  status: string | Placeholder;
  /** ISO time, or null. */
  holdUntil: string | null | Placeholder;
  /** ISO time when approved at once, else null. */
  approvedAt: string | null | Placeholder;
  at: string | Placeholder;
}

/**
 * The commission insert of the sale `sale` (a condition on `affiliate_sale_events s` naming exactly one
 * sale), written once for the sale's kept-plan statement and for the scheduled repair.
 */
export function commissionInsert(v: CommissionValues, sale: SQL): SQL {
  const k = commissions;
  return sql`
      insert into ${k} (${columnList(k.saleId, k.programId, k.partnerId, k.customerId, k.amountCents, k.currency, k.status, k.holdUntil, k.approvedAt, k.createdAt, k.updatedAt)})
      select ${s.id}, ${s.programId}, ${s.partnerId}, ${s.customerId}, ${v.amountCents}::bigint, ${v.currency}::text,
             ${v.status}::text, ${v.holdUntil}::timestamptz, ${v.approvedAt}::timestamptz, ${v.at}::timestamptz,
             ${v.at}::timestamptz
      from ${saleEvents} ${s} where ${sale}`;
}

/** A plan's values for `commissionInsert`. */
export function commissionValues(plan: CommissionPlan, at: string): CommissionValues {
  return {
    amountCents: plan.amountCents,
    currency: plan.currency,
    status: plan.status,
    holdUntil: plan.holdUntil?.toISOString() ?? null,
    approvedAt: plan.status === "approved" ? at : null,
    at,
  };
}

/** The id of the commission of the sale `sale`, as a subquery for `creditCommissionStatement`. */
export function commissionOfSale(sale: SQL): SQL {
  return sql`select ${c.id} from ${commissions} ${c} join ${saleEvents} ${s} on ${s.id} = ${c.saleId} where ${sale}`;
}

/**
 * The one commission insert: the planned commission of the sale `sale` (a condition on
 * `affiliate_sale_events s` naming exactly one sale) and, when it is approved at once, its credit
 * (`creditCommissionStatement`). Used by the scheduled repair; the sale's own write runs the same
 * statements as kept-plan functions.
 */
export function commissionInsertStatements(plan: CommissionPlan, sale: SQL, now: Date): SQL[] {
  const at = now.toISOString();
  const insert = commissionInsert(commissionValues(plan, at), sale);
  return plan.status === "approved"
    ? [insert, creditCommissionStatement(commissionOfSale(sale), at)]
    : [insert];
}
