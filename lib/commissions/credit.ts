import { type SQL, sql } from "drizzle-orm";
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
 * Statements that credit an approved commission to its partner's balance, for inclusion in a write batch.
 * The ledger row is unique per commission and cause (`commissionCreditOnceIndex`), so a commission can never
 * be credited twice; the balance moves by the same amount in the same transaction.
 *
 * `commissionId` is an SQL expression naming the commission (its id, or a subquery when the commission is
 * inserted earlier in the same batch).
 */
export function creditCommissionStatements(commissionId: SQL, now: Date): SQL[] {
  const at = now.toISOString();
  const bl = balanceLedger;
  const pb = partnerBalances;
  const balanceCents = columnName(pb.balanceCents);
  const updatedAt = columnName(pb.updatedAt);
  return [
    sql`
      insert into ${bl} (${columnList(bl.programId, bl.partnerId, bl.currency, bl.amountCents, bl.cause, bl.commissionId, bl.createdAt)})
      select ${c.programId}, ${c.partnerId}, ${c.currency}, ${c.amountCents} - ${c.deductedCents}, 'commission_credit', ${c.id},
             ${at}::timestamptz
      from ${commissions} ${c} where ${c.id} = (${commissionId})`,
    sql`
      insert into ${pb} (${columnList(pb.programId, pb.partnerId, pb.currency, pb.balanceCents, pb.updatedAt)})
      select ${c.programId}, ${c.partnerId}, ${c.currency}, ${c.amountCents} - ${c.deductedCents}, ${at}::timestamptz
      from ${commissions} ${c} where ${c.id} = (${commissionId})
      on conflict (${columnList(pb.programId, pb.partnerId, pb.currency)}) do update
        set ${balanceCents} = ${pb.balanceCents} + excluded.${balanceCents},
            ${updatedAt} = excluded.${updatedAt}`,
    sql`
      update ${commissions} set ${columnName(commissions.creditedAt)} = ${at}::timestamptz,
                                ${columnName(commissions.updatedAt)} = ${at}::timestamptz
      where ${commissions.id} = (${commissionId})`,
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
  const k = commissions;
  const statements = [
    sql`
      insert into ${k} (${columnList(k.saleId, k.programId, k.partnerId, k.customerId, k.amountCents, k.currency, k.status, k.holdUntil, k.approvedAt, k.createdAt, k.updatedAt)})
      select ${s.id}, ${s.programId}, ${s.partnerId}, ${s.customerId}, ${plan.amountCents}::bigint, ${plan.currency},
             ${plan.status}, ${plan.holdUntil?.toISOString() ?? null}::timestamptz,
             ${approved ? at : null}::timestamptz, ${at}::timestamptz, ${at}::timestamptz
      from ${saleEvents} ${s} where ${sale}`,
  ];
  if (approved) {
    const commissionId = sql`select ${c.id} from ${commissions} ${c} join ${saleEvents} ${s} on ${s.id} = ${c.saleId}
                             where ${sale}`;
    statements.push(...creditCommissionStatements(commissionId, now));
  }
  return statements;
}
