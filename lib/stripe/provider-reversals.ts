import { type SQL, sql } from "drizzle-orm";
import { alias } from "drizzle-orm/pg-core";
import { saleEvents } from "../../schema/events.ts";
import { paymentAliases } from "../../schema/payment-aliases.ts";
import { programs } from "../../schema/programs.ts";
import { stripePendingReversals } from "../../schema/stripe-events.ts";
import type { Database } from "../db/client.ts";
import { columnList, columnName, fromDriver, fromDriverOrNull } from "../db/columns.ts";
import { textList } from "../db/sql-lists.ts";
import { wellFormedJson } from "../db/well-formed-json.ts";
import { divideRoundHalfUp } from "../money.ts";
import type { RefundOutcome, RefundParties } from "../refunds/apply-refund.ts";
import { idempotencyKeyFor, type RefundFacts, type RefundIntent } from "../refunds/decide-refund.ts";
import { type RefundPlan, refundSale } from "../refunds/refund-sale.ts";
import {
  everyAppliedRefund,
  refundFactsColumns,
  refundFactsFromRow,
  refundProgram,
  refundSale as saleRow,
} from "../refunds/refund-store.ts";
import { liveNamespace, type PaymentNamespace, paymentNamespace } from "../sales/payment-namespace.ts";
import type { ProviderReversal } from "./provider-events.ts";

interface ReversalRead {
  /** The sale this provider payment recorded (source `stripe`), with its commission and refunds. */
  sale: { facts: RefundFacts; parties: RefundParties } | null;
  /** A sale under the same id recorded by the sale endpoint: not linked to the provider's payment. */
  apiSale: boolean;
}

/**
 * Where a reversal's sale is: recorded under one of the payment ids the charge names, or the sale a
 * payment alias of one of them points to (an invoice keyed by its invoice id, whose PaymentIntent
 * `invoice_payment.paid` named).
 */
export function reversalTarget(paymentIds: readonly string[], namespace: PaymentNamespace): SQL {
  const list = textList(paymentIds);
  const ns = sql`${namespace}::text`;
  const s = saleRow;
  const a = alias(paymentAliases, "a");
  return sql`(${s.processorEventId} in ${list} and ${s.idNamespace} = ${ns}
    or ${s.id} in (select ${a.saleId} from ${paymentAliases} ${a}
                   where ${a.namespace} = ${ns} and ${a.alias} in ${list} and ${a.saleId} is not null))`;
}

/** `readReversalFacts`'s target for one sale by its id. */
export function reversalSaleById(saleId: number): SQL {
  return sql`${saleRow.id} = ${saleId}::bigint`;
}

/**
 * One round trip: the program's sale matching `target` (a condition on the sale row `s`, e.g. `reversalSaleById`), as the refund rules
 * see it (the events' first).
 */
export async function readReversalFacts(db: Database, programId: number, target: SQL): Promise<ReversalRead> {
  const s = saleRow;
  const p = refundProgram;
  const result = await db.execute(sql`
    select ${refundFactsColumns(everyAppliedRefund)}, ${s.source} as source
    from ${saleEvents} ${s}
    join ${programs} ${p} on ${p.id} = ${s.programId}
    where ${s.programId} = ${programId}::int and ${target}
    order by ${s.source} = 'stripe' desc, ${s.id}
    limit 1`);
  const row = result.rows[0];
  if (!row) return { sale: null, apiSale: false };
  if (row.source !== "stripe") return { sale: null, apiSale: true };
  return { apiSale: false, sale: refundFactsFromRow(row) };
}

/**
 * What the refund endpoint would be asked next, given what is already recorded. A refund event carries the
 * charge's CUMULATIVE refunded amount: the sale's share of it (the same amount when the sale is the whole
 * charge) minus what the sale has already had refunded is what is left to refund, so a replay, an older
 * event arriving late, or a refund also sent through the refund endpoint adds nothing. Of that, the oldest
 * refund the event lists that is not applied yet goes first, under its own id and for its own share: an event
 * that arrives listing several refunds (one or more of their own events missed or late) records each under its
 * id, so the refund endpoint sent one of them afterwards finds it applied. What the list does not explain goes
 * under the newest refund's id (or one derived from the charge). A dispute is a chargeback: everything left,
 * keyed by the dispute id.
 */
export function reversalIntent(
  reversal: ProviderReversal,
  facts: RefundFacts,
): { intent: RefundIntent } | { skip: string } {
  const { sale } = facts;
  if (reversal.kind === "chargeback") {
    return {
      intent: {
        amountCents: sale.amountCents,
        refundId: reversal.reversalId,
        reason: "chargeback",
        refundReason: null,
      },
    };
  }
  const share = (chargeCents: number) =>
    reversal.chargeAmountCents === sale.amountCents
      ? chargeCents
      : Number(
          divideRoundHalfUp(
            BigInt(sale.amountCents) * BigInt(chargeCents),
            BigInt(reversal.chargeAmountCents),
          ),
        );
  const delta = Math.min(share(reversal.refundedTotalCents), sale.amountCents) - sale.refundedCents;
  if (delta <= 0) return { skip: "refund already recorded" };
  const applied = new Set(facts.appliedRefunds.map((a) => a.idempotencyKey));
  const isApplied = (refundId: string) => applied.has(idempotencyKeyFor(refundIntentOf(refundId, 1)));
  const next = reversal.refunds.find((r) => !isApplied(r.id));
  const newest = reversal.refunds.at(-1);
  if (next && next !== newest) {
    return { intent: refundIntentOf(next.id, Math.min(Math.max(share(next.amountCents), 1), delta)) };
  }
  // The newest listed refund takes what is left; when it is applied already (the refund endpoint sent it, for
  // less than the provider counts, or the list was cut short), the rest goes under an id of this cumulative
  // amount, which a replay of the event finds applied.
  const refundId =
    next?.id ??
    (isApplied(reversal.reversalId)
      ? `${reversal.reversalId}:rest:${reversal.refundedTotalCents}`
      : reversal.reversalId);
  return { intent: refundIntentOf(refundId, delta) };
}

function refundIntentOf(refundId: string, amountCents: number): RefundIntent {
  return { amountCents, refundId, reason: "refund", refundReason: null };
}

export type ReversalResult =
  | { outcome: "no_sale"; apiSale: boolean }
  | { outcome: "skipped"; reason: string }
  | { outcome: Exclude<RefundOutcome["status"], "skipped" | "awaiting_commission"> };

/**
 * The refund endpoint's reversal logic (`applyRefund`) on the sale a provider payment recorded: one refund at
 * a time (`reversalIntent`), each in its own transaction on the state the last one left, until the event's
 * cumulative amount is recorded. Answers the last refund's outcome.
 */
export async function applyProviderReversal(
  db: Database,
  programId: number,
  reversal: ProviderReversal,
  now: Date,
): Promise<ReversalResult> {
  let last: ReversalResult | undefined;
  // One step per listed refund and one for what the list leaves: a bound, whatever the state.
  for (let step = 0; step <= reversal.refunds.length; step++) {
    const result = await refundSale(db, now, async (): Promise<RefundPlan<ReversalResult>> => {
      const read = await readReversalFacts(
        db,
        programId,
        reversalTarget(reversal.paymentIds, paymentNamespace(!reversal.livemode, programId)),
      );
      if (!read.sale) return { answer: { outcome: "no_sale", apiSale: read.apiSale } };
      const planned = reversalIntent(reversal, read.sale.facts);
      if ("skip" in planned) return { answer: { outcome: "skipped", reason: planned.skip } };
      return { refund: { ...read.sale, intent: planned.intent } };
    });
    const outcome = "answer" in result ? result.answer : reversalResultOf(result.outcome);
    // Nothing (more) to apply: the first step's answer stands, or the last applied refund's.
    if (outcome.outcome === "no_sale" || outcome.outcome === "skipped") return last ?? outcome;
    last = outcome;
    if (reversal.kind === "chargeback") break;
  }
  return last as ReversalResult;
}

/** A refund outcome as a provider event reports it. */
export function reversalResultOf(outcome: RefundOutcome): ReversalResult {
  switch (outcome.status) {
    case "skipped":
      return { outcome: "skipped", reason: outcome.reason };
    case "no_commission":
      return { outcome: "no_commission" };
    case "awaiting_commission":
      // Answered 500 by the events worker: the provider resends the event, and by then the scheduled
      // repair (every 5 minutes) has created the commission.
      throw new AwaitingCommissionError();
    default:
      return { outcome: outcome.status };
  }
}

/** The sale's commission is still being repaired: the event is retried later. */
export class AwaitingCommissionError extends Error {
  readonly logCode = "awaiting_commission";
  constructor() {
    super("the sale's commission is still being repaired");
    this.name = "AwaitingCommissionError";
  }
}

/**
 * Keeps a reversal whose sale is not recorded yet, in its mode's namespace; the payment event that records the
 * sale (of the same mode) applies it.
 */
export async function deferReversal(
  db: Database,
  programId: number,
  eventId: string,
  reversal: ProviderReversal,
): Promise<void> {
  const t = stripePendingReversals;
  await db.execute(sql`
    insert into ${t}
      (${columnList(
        t.programId,
        t.paymentId,
        t.eventId,
        t.kind,
        t.reversalId,
        t.chargeAmountCents,
        t.refundedTotalCents,
        t.reason,
        t.namespace,
        t.listedRefunds,
      )})
    values (${programId}::int, ${reversal.paymentIds[0] ?? ""}, ${eventId}, ${reversal.kind}, ${reversal.reversalId},
            ${reversal.chargeAmountCents}::bigint, ${reversal.refundedTotalCents}::bigint, ${reversal.reason}::text,
            ${paymentNamespace(!reversal.livemode, programId)}::text, ${wellFormedJson(reversal.refunds)}::jsonb)
    on conflict (${columnName(t.eventId)}) do nothing`);
}

export async function markReversalsApplied(db: Database, eventIds: string[], now: Date): Promise<void> {
  if (eventIds.length === 0) return;
  const t = stripePendingReversals;
  await db.execute(sql`
    update ${t} set ${columnName(t.appliedAt)} = ${now.toISOString()}::timestamptz
    where ${t.eventId} in ${textList(eventIds)} and ${t.appliedAt} is null`);
}

/**
 * The reversals kept for a recorded sale, oldest first (one round trip): those of its mode naming its key or
 * one of its aliases. Aliases recorded unlinked for `paymentIds` (the sale's ids) are linked to it first: an
 * `invoice_payment.paid` kept while the sale was being written is seen here (write first, then look).
 */
export async function pendingReversalsForSale(
  db: Database,
  programId: number,
  saleId: number,
  paymentIds: readonly string[],
): Promise<Array<{ eventId: string; reversal: ProviderReversal }>> {
  const a = paymentAliases;
  const sale = saleEvents;
  const t = stripePendingReversals;
  // Of the sale's own namespace only: a test-mode refund never reaches a live sale of the same payment id.
  const result = await db.execute(sql`
    with linked as (
      update ${a} set ${columnName(a.saleId)} = ${saleId}::bigint
      where ${a.namespace} = (select ${sale.idNamespace} from ${sale} where ${sale.id} = ${saleId}::bigint)
        and ${a.paymentId} in ${textList(paymentIds)} and ${a.saleId} is null
      returning ${a.alias} as alias)
    select ${t.eventId} as event_id, ${t.kind} as kind, ${t.paymentId} as payment_id, ${t.reversalId} as reversal_id,
           ${t.chargeAmountCents} as charge_amount_cents, ${t.refundedTotalCents} as refunded_total_cents,
           ${t.reason} as reason, ${t.namespace} as namespace, ${t.listedRefunds} as listed_refunds
    from ${t}
    where ${t.programId} = ${programId}::int and ${t.appliedAt} is null
      and ${t.namespace} = (select ${sale.idNamespace} from ${sale} where ${sale.id} = ${saleId}::bigint)
      and ${t.paymentId} in (select ${sale.processorEventId} from ${sale} where ${sale.id} = ${saleId}::bigint
                             union all select ${a.alias} from ${a} where ${a.saleId} = ${saleId}::bigint
                             union all select alias from linked)
    order by ${t.id}`);
  return result.rows.map((r) => ({
    eventId: fromDriver(t.eventId, r.event_id),
    reversal: {
      kind: r.kind === "chargeback" ? "chargeback" : "refund",
      paymentIds: [fromDriver(t.paymentId, r.payment_id)],
      reversalId: fromDriver(t.reversalId, r.reversal_id),
      refunds: fromDriver(t.listedRefunds, r.listed_refunds),
      chargeAmountCents: fromDriver(t.chargeAmountCents, r.charge_amount_cents),
      refundedTotalCents: fromDriver(t.refundedTotalCents, r.refunded_total_cents),
      livemode: fromDriver(t.namespace, r.namespace) === liveNamespace,
      reason: fromDriverOrNull(t.reason, r.reason),
    },
  }));
}
