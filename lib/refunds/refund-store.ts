import { type Placeholder, type SQL, sql } from "drizzle-orm";
import { alias } from "drizzle-orm/pg-core";
import { balanceLedger, partnerBalances, withdrawals } from "../../schema/balances.ts";
import { type CommissionStatus, commissions, refunds } from "../../schema/commissions.ts";
import { saleEvents } from "../../schema/events.ts";
import { notifications } from "../../schema/notifications.ts";
import { paymentAliases } from "../../schema/payment-aliases.ts";
import { programs } from "../../schema/programs.ts";
import { type ApiKeyRecord, apiKeyRecordFromRow, apiKeyRecordQuery } from "../auth/program-key.ts";
import { checkedNotSearched } from "../db/checked-not-searched.ts";
import type { Database } from "../db/client.ts";
import { columnList, columnName, fromDriver } from "../db/columns.ts";
import { groupCommittedStatement, type Sending } from "../db/group-committed-statement.ts";
import { groupCommittedWrite } from "../db/group-committed-write.ts";
import { keptPlanStatement } from "../db/kept-plan.ts";
import { keptPlanSequence } from "../db/kept-plan-sequence.ts";
import { wellFormedJson } from "../db/well-formed-json.ts";
import { keyProgram } from "../tracking/sale/sale-store.ts";
import { commissionRefundedWebhookStatement } from "../webhooks/outbox-statements.ts";
import type { RefundFacts, RefundRepeat, RefundWrite } from "./decide-refund.ts";
import type { RefundNotification } from "./refund-notifications.ts";

export interface RefundRead {
  key: ApiKeyRecord | null;
  facts: RefundFacts | null;
  /** For notifications: who to tell. */
  parties: { programId: number; partnerId: number | null; advertiserId: number } | null;
}

/** The sale `s` and its program `p` whose columns `refundFactsColumns` reads. */
export const refundSale = alias(saleEvents, "s");
export const refundProgram = alias(programs, "p");
const r = alias(refunds, "r");
const m = commissions;
/** Every refund applied to the sale `s`, as `refundFactsColumns` reads them: the provider's reversals read all. */
export const everyAppliedRefund = sql`
  select ${r.idempotencyKey} as key, ${r.requestedCents} as amount from ${refunds} ${r} where ${r.saleId} = ${refundSale.id}`;

/**
 * The refunds applied to the sale `s` that a call would repeat (`repeatOf` in decide-refund.ts): the one under
 * its idempotency key (a lookup), and, when `amountCents` is not null (a partial refund without a `refund_id`),
 * those of the same amount under another key (the sale's refunds walked by its index, none of them sent but
 * those). The refund endpoint reads only these, so what it sends and parses no longer grows with the sale's
 * refunds, and a refund with a `refund_id` reads one index entry of them.
 */
function appliedRefundsRepeatedBy(idempotencyKey: SQL, amountCents: SQL): SQL {
  return sql`
  select ${r.idempotencyKey} as key, ${r.requestedCents} as amount from ${refunds} ${r}
  where ${r.saleId} = ${refundSale.id} and ${r.idempotencyKey} = ${idempotencyKey}
  union all
  select ${r.idempotencyKey}, ${r.requestedCents} from ${refunds} ${r}
  where ${amountCents} is not null and ${r.saleId} = ${refundSale.id}
    and ${r.requestedCents} = ${amountCents} and ${r.idempotencyKey} <> ${idempotencyKey}`;
}

/**
 * The columns the refund rules read for a sale `s` (joined to its program `p`): the sale, its commission
 * and the applied refunds `appliedRefunds` selects (`key`, `amount`). Shared by the refund endpoint and the
 * provider's reversal events.
 */
export function refundFactsColumns(appliedRefunds: SQL): SQL {
  return sql`
  ${refundSale.id} as id, ${refundSale.amountCents} as amount_cents, ${refundSale.refundedCents} as refunded_cents,
  ${refundSale.currency} as currency, ${refundSale.needsCommission} as needs_commission,
  ${refundSale.programId} as program_id, ${refundProgram.advertiserId} as advertiser_id,
  (select row_to_json(c) from (
     select ${m.id} as id, ${m.amountCents} as amount_cents, ${m.deductedCents} as deducted_cents,
            ${m.status} as status, ${m.creditedAt} is not null as credited,
            ${m.paidOutAt} is not null or ${m.status} = 'paid' as paid_out, ${m.version} as version,
            ${m.isTest} as is_test, ${m.partnerId} as partner_id
     from ${m} where ${m.saleId} = ${refundSale.id}) c) as commission,
  coalesce((select json_agg(json_build_object('key', applied.key, 'amount', applied.amount))
            from (${appliedRefunds}) applied), '[]'::json) as refunds`;
}

export function refundFactsFromRow(row: Record<string, unknown>): {
  facts: RefundFacts;
  parties: NonNullable<RefundRead["parties"]>;
} {
  const c = row.commission as {
    id: number;
    amount_cents: number;
    deducted_cents: number;
    status: CommissionStatus;
    credited: boolean;
    paid_out: boolean;
    version: number;
    is_test: boolean;
    partner_id: number;
  } | null;
  return {
    facts: {
      sale: {
        id: fromDriver(refundSale.id, row.id),
        amountCents: fromDriver(refundSale.amountCents, row.amount_cents),
        refundedCents: fromDriver(refundSale.refundedCents, row.refunded_cents),
        currency: fromDriver(refundSale.currency, row.currency),
        awaitingCommission: row.needs_commission === true,
      },
      commission: c && {
        id: fromDriver(m.id, c.id),
        amountCents: fromDriver(m.amountCents, c.amount_cents),
        deductedCents: fromDriver(m.deductedCents, c.deducted_cents),
        status: c.status,
        credited: c.credited === true,
        paidOut: c.paid_out === true,
        version: fromDriver(m.version, c.version),
        isTest: c.is_test === true,
      },
      appliedRefunds: (row.refunds as Array<{ key: string; amount: number | null }>).map((applied) => ({
        idempotencyKey: applied.key,
        // An omitted refund amount is stored null and counts as 0 (Number(null)), as before.
        amountCents: applied.amount === null ? 0 : fromDriver(r.requestedCents, applied.amount),
      })),
    },
    parties: {
      programId: fromDriver(refundSale.programId, row.program_id),
      partnerId: c ? fromDriver(m.partnerId, c.partner_id) : null,
      advertiserId: fromDriver(refundProgram.advertiserId, row.advertiser_id),
    },
  };
}

/**
 * The key's record, and the sale of the key's program by the given id, or by any other id of the payment: a
 * provider-recorded sale by its Checkout Session id, an invoice sale by its PaymentIntent id (payment_aliases,
 * the one index of a payment's ids); a live sale before a test sale of the same id. ONE statement, each part
 * as JSON, run as the PL/pgSQL function `read_refund_and_repeats` (`keptPlanStatement`): planned once per
 * connection, not per refund. Of the sale's applied refunds it reads only those the call would repeat
 * (`repeatKey`, `repeatAmountCents`: `repeatOf` in decide-refund.ts; migration 0051, where it replaced
 * `read_refund_facts`, which read them all).
 */
export const refundFactsStatement = keptPlanStatement({
  functionName: "read_refund_and_repeats",
  names: ["keyHash", "transactionId", "repeatKey", "repeatAmountCents"],
  parameterTypes: { keyHash: "text", transactionId: "text", repeatKey: "text", repeatAmountCents: "bigint" },
  returns: [
    ["key", "json"],
    ["sale", "json"],
  ],
  build: (q) => {
    const s = refundSale;
    const repeated = appliedRefundsRepeatedBy(sql`${q.repeatKey}::text`, sql`${q.repeatAmountCents}::bigint`);
    return sql`
      select
        (select row_to_json(part) from (${apiKeyRecordQuery(q.keyHash)}) part) as key,
        (select row_to_json(part) from (
          select ${refundFactsColumns(repeated)}
          from ${saleEvents} ${s}
          join ${programs} ${refundProgram} on ${refundProgram.id} = ${s.programId}
          where ${keyProgramSaleNamed(q.keyHash, q.transactionId)}
          order by ${s.isTest}, ${s.id}
          limit 1) part) as sale`;
  },
});

/**
 * The condition on the sale `s` (`refundSale`) that it is the key's program's sale named by `transactionId`: its
 * own id, or another id of the payment (`payment_aliases`), in the live namespace or the key's program's test
 * one. Order by `s.is_test, s.id` to take a live sale before a test one, as the refund's read does. Shared by
 * the read and the order of refunds decided at once (`refund_lock_order`).
 */
export function keyProgramSaleNamed(keyHash: Placeholder, transactionId: Placeholder): SQL {
  const program = keyProgram(keyHash);
  const s = refundSale;
  const x = alias(saleEvents, "x");
  const a = alias(paymentAliases, "a");
  const namespaces = sql`('live', 'test:' || ${program})`;
  // The text (its line breaks and indentation too) is the body of the migrated `read_refund_and_repeats`.
  return sql`${checkedNotSearched(sql`${s.programId} = ${program}`)}
            and ${s.id} in (
              select ${x.id} from ${saleEvents} ${x}
              where ${x.idNamespace} in ${namespaces} and ${x.processorEventId} = ${transactionId}::text
              union all
              select ${a.saleId} from ${paymentAliases} ${a}
              where ${a.namespace} in ${namespaces} and ${a.alias} = ${transactionId}::text and ${a.saleId} is not null)`;
}

/** The refund's read through the isolate's group commit (`read_refund_and_repeats_batch`, migrations 0051, 0052). */
export const refundReadSent = groupCommittedStatement<
  typeof refundFactsStatement.names,
  { key: Parameters<typeof apiKeyRecordFromRow>[0] | null; sale: Record<string, unknown> | null }
>({
  functionName: "read_refund_and_repeats_batch",
  statement: refundFactsStatement,
  what: "refund read",
  inlined: true,
});

/**
 * The key, and the sale (of the key's program only) with its commission and the applied refunds this call
 * would repeat (none when `repeat` is null, for a body that is not a valid refund): one round trip
 * (which may be shared with the reads of other refunds arriving at the same time, `lib/db/group-commit.ts`).
 */
export async function readRefundFacts(
  db: Database,
  keyHash: string,
  transactionId: string | null,
  repeat: RefundRepeat | null,
  sending?: Sending,
): Promise<RefundRead> {
  const row = await refundReadSent.send(
    db,
    {
      keyHash,
      transactionId,
      repeatKey: repeat?.idempotencyKey ?? null,
      repeatAmountCents: repeat?.amountCents ?? null,
    },
    sending,
  );
  const key = apiKeyRecordFromRow(row.key ?? undefined);
  if (!row.sale) return { key, facts: null, parties: null };
  return { key, ...refundFactsFromRow(row.sale) };
}

/** The refund row the write inserts, by its sale and idempotency key (for the statements after the insert). */
function refundRowOf(saleId: Placeholder, idempotencyKey: Placeholder): SQL {
  return sql`(select ${refunds.id} from ${refunds} where ${refunds.saleId} = ${saleId}::bigint and ${refunds.idempotencyKey} = ${idempotencyKey}::text)`;
}

// The refund write's statements, each run as a PL/pgSQL function (`keptPlanStatement`, migrations 0031 and
// 0038): planned once per connection, and rendered once per isolate instead of by drizzle on every refund.

/**
 * The sale's cumulative refunded amount, guarded on the amount that was read, and the refund row (unique per
 * sale and idempotency key), returning its id: one statement where three were (migration 0038). The guard
 * reads `updated` first, so a refund that lost the race fails it before its row is inserted, as when the
 * row was a statement of its own.
 */
export const recordRefundStatement = keptPlanStatement({
  functionName: "record_refund",
  names: [
    "saleId",
    "expectedRefundedCents",
    "commissionId",
    "idempotencyKey",
    "refundId",
    "requestedCents",
    "amountCents",
    "refundedTotalCents",
    "deductionCents",
    "reason",
    "refundReason",
    "at",
  ],
  parameterTypes: {
    saleId: "bigint",
    expectedRefundedCents: "bigint",
    commissionId: "bigint",
    idempotencyKey: "text",
    refundId: "text",
    requestedCents: "bigint",
    amountCents: "bigint",
    refundedTotalCents: "bigint",
    deductionCents: "bigint",
    reason: "text",
    refundReason: "text",
    at: "timestamp with time zone",
  },
  returns: [
    ["ok", "boolean"],
    ["refund_id", "bigint"],
  ],
  build: (q) => {
    const sale = saleEvents;
    return sql`
      with updated as (
        update ${sale} set ${columnName(sale.refundedCents)} = ${q.refundedTotalCents}::bigint
        where ${sale.id} = ${q.saleId}::bigint and ${sale.refundedCents} = ${q.expectedRefundedCents}::bigint
          and not ${sale.needsCommission}
        returning ${sale.id}),
      inserted as (
        insert into ${refunds} (${columnList(
          refunds.saleId,
          refunds.commissionId,
          refunds.idempotencyKey,
          refunds.refundId,
          refunds.requestedCents,
          refunds.amountCents,
          refunds.refundedTotalCents,
          refunds.deductionCents,
          refunds.reason,
          refunds.refundReason,
          refunds.createdAt,
        )})
        values (${q.saleId}::bigint, ${q.commissionId}::bigint, ${q.idempotencyKey}::text, ${q.refundId}::text,
                ${q.requestedCents}::bigint, ${q.amountCents}::bigint, ${q.refundedTotalCents}::bigint,
                ${q.deductionCents}::bigint, ${q.reason}::text, ${q.refundReason}::text, ${q.at}::timestamptz)
        returning ${refunds.id})
      select guard(exists (select 1 from updated), 'sale refunded meanwhile, or awaiting its commission') as ok,
             (select id from inserted) as refund_id`;
  },
});

/**
 * The commission's new status and deduction, guarded on the version that was read. A commission leaving
 * status 'paid' must not lose the payout (paid_out_at): later refunds of it are flagged as well.
 */
export const refundCommissionStatement = keptPlanStatement({
  functionName: "refund_commission",
  names: [
    "commissionId",
    "expectedVersion",
    "status",
    "newDeductedCents",
    "refundReason",
    "flagForReview",
    "at",
  ],
  parameterTypes: {
    commissionId: "bigint",
    expectedVersion: "integer",
    status: "text",
    newDeductedCents: "bigint",
    refundReason: "text",
    flagForReview: "boolean",
    at: "timestamp with time zone",
  },
  returns: [["ok", "boolean"]],
  build: (q) => sql`
      with updated as (
        update ${m}
        set ${columnName(m.status)} = ${q.status}::text, ${columnName(m.deductedCents)} = ${q.newDeductedCents}::bigint,
            ${columnName(m.refundReason)} = ${q.refundReason}::text,
            ${columnName(m.needsManualReview)} = ${m.needsManualReview} or ${q.flagForReview}::boolean,
            ${columnName(m.paidOutAt)} =
              case when ${m.status} = 'paid' then coalesce(${m.paidOutAt}, ${q.at}::timestamptz) else ${m.paidOutAt} end,
            ${columnName(m.version)} = ${m.version} + 1, ${columnName(m.updatedAt)} = ${q.at}::timestamptz
        where ${m.id} = ${q.commissionId}::bigint and ${m.version} = ${q.expectedVersion}::int
        returning ${m.id})
      select guard(exists (select 1 from updated), 'commission changed meanwhile')`,
});

/** The commission's owner, as `o` with the commission's own column names (program_id, partner_id, currency). */
const ownerProgram = sql`o.${columnName(m.programId)}`;
const ownerPartner = sql`o.${columnName(m.partnerId)}`;
const ownerCurrency = sql`o.${columnName(m.currency)}`;

/**
 * The deduction, one statement where three were (migration 0038): a ledger row tied to the commission and the
 * refund, the balance moved by the same amount (it may go negative), then open withdrawals reduced, oldest
 * kept first, so together they fit the balance the upsert returns (the row as this transaction left it).
 */
export const deductionStatement = keptPlanStatement({
  functionName: "refund_deduction",
  names: ["commissionId", "cents", "saleId", "idempotencyKey", "at"],
  parameterTypes: {
    commissionId: "bigint",
    cents: "bigint",
    saleId: "bigint",
    idempotencyKey: "text",
    at: "timestamp with time zone",
  },
  returns: [],
  build: (q) => {
    const l = balanceLedger;
    const pb = partnerBalances;
    const wd = alias(withdrawals, "w");
    return sql`
      with owner as (
        select ${m.programId}, ${m.partnerId}, ${m.currency} from ${m} where ${m.id} = ${q.commissionId}::bigint),
      ledger as (
        insert into ${l} (${columnList(
          l.programId,
          l.partnerId,
          l.currency,
          l.amountCents,
          l.cause,
          l.commissionId,
          l.refundId,
          l.createdAt,
        )})
        select ${ownerProgram}, ${ownerPartner}, ${ownerCurrency}, -${q.cents}::bigint, 'refund_deduction',
               ${q.commissionId}::bigint, ${refundRowOf(q.saleId, q.idempotencyKey)}, ${q.at}::timestamptz
        from owner o),
      balance as (
        insert into ${pb} (${columnList(pb.programId, pb.partnerId, pb.currency, pb.balanceCents, pb.updatedAt)})
        select ${ownerProgram}, ${ownerPartner}, ${ownerCurrency}, -${q.cents}::bigint, ${q.at}::timestamptz
        from owner o
        on conflict (${columnList(pb.programId, pb.partnerId, pb.currency)}) do update
          set ${columnName(pb.balanceCents)} = ${pb.balanceCents} + excluded.${columnName(pb.balanceCents)},
              ${columnName(pb.updatedAt)} = excluded.${columnName(pb.updatedAt)}
        returning greatest(${pb.balanceCents}, 0) as available),
      open as (
        select ${wd.id} as id, ${wd.amountCents} as amount_cents,
               sum(${wd.amountCents}) over (order by ${wd.createdAt}, ${wd.id}) - ${wd.amountCents} as before
        from ${withdrawals} ${wd}, owner o
        where ${wd.programId} = ${ownerProgram} and ${wd.partnerId} = ${ownerPartner}
          and ${wd.currency} = ${ownerCurrency} and ${wd.status} = 'open'),
      fitted as (
        select open.id, least(open.amount_cents, greatest(0, balance.available - open.before)) as amount
        from open, balance)
      update ${withdrawals} ${wd}
      set ${columnName(wd.amountCents)} = fitted.amount,
          ${columnName(wd.status)} = case when fitted.amount = 0 then 'cancelled' else ${wd.status} end,
          ${columnName(wd.updatedAt)} = ${q.at}::timestamptz
      from fitted
      where ${wd.id} = fitted.id and fitted.amount <> ${wd.amountCents}`;
  },
});

/** `commission.updated` with the refund's amounts. */
export const refundWebhookStatement = keptPlanStatement({
  functionName: "enqueue_commission_refunded_webhook",
  names: ["commissionId", "saleId", "idempotencyKey", "at"],
  parameterTypes: {
    commissionId: "bigint",
    saleId: "bigint",
    idempotencyKey: "text",
    at: "timestamp with time zone",
  },
  returns: [["enqueued", "integer"]],
  build: (q) =>
    commissionRefundedWebhookStatement(q.commissionId, refundRowOf(q.saleId, q.idempotencyKey), q.at),
});

/**
 * The in-app notifications of the commission's transition (`RefundNotification`, a JSON array), each deduped by
 * the refund row this write inserted and its recipient (`refund:<refund row id>:partner`): written with the
 * refund, in its transaction (migration 0047), where they went on the notifications queue after the response.
 * A notification is then never lost to a queue send that failed, and a refund costs neither a queue message
 * nor the consumer's write (`npm run bench -- refund`: the worker's CPU per refund fell by half).
 */
export const refundNotificationsStatement = keptPlanStatement({
  functionName: "insert_refund_notifications",
  names: ["notifications", "saleId", "idempotencyKey", "at"],
  parameterTypes: {
    notifications: "jsonb",
    saleId: "bigint",
    idempotencyKey: "text",
    at: "timestamp with time zone",
  },
  returns: [],
  build: (q) => {
    const t = notifications;
    return sql`
      insert into ${t} (${columnList(t.recipientType, t.recipientId, t.programId, t.kind, t.payload, t.dedupeKey, t.createdAt)})
      select n.recipient_type, n.recipient_id, n.program_id, n.kind, n.payload,
             'refund:' || ${refundRowOf(q.saleId, q.idempotencyKey)} || ':' || n.recipient_type, ${q.at}::timestamptz
      from jsonb_to_recordset(${q.notifications}::jsonb)
        as n(recipient_type text, recipient_id integer, program_id integer, kind text, payload jsonb)
      on conflict (${columnList(t.dedupeKey)}) do nothing`;
  },
});

/**
 * The refund write's statements as ONE statement (`keptPlanSequence`, migrations 0041 and 0047): the refund
 * recorded (its row's id returned), then the commission's change, the balance deduction, the webhook and the
 * in-app notifications when the sale has a commission. Four statements of a batch before, and a queue message.
 */
export const refundWrite = keptPlanSequence({
  functionName: "write_refund",
  steps: {
    refund: recordRefundStatement,
    commission: refundCommissionStatement,
    deduction: deductionStatement,
    webhook: refundWebhookStatement,
    notifications: refundNotificationsStatement,
  },
  returnsFrom: "refund",
});

type RefundWriteValues = Parameters<typeof refundWrite.call>[0];

/**
 * The refund's write through the isolate's group commit: refunds arriving while one is being written go
 * together as one call of `write_refunds` (migration 0048), each in a subtransaction of its own, in the order
 * of their partners (whose balances a deduction locks).
 */
export const refundWriteSent = groupCommittedWrite<typeof refundWrite, { ok: unknown; refund_id: unknown }>({
  functionName: "write_refunds",
  sequence: refundWrite,
  what: "the refund's write",
});

/**
 * Applies a decided refund in ONE transaction: the sale's cumulative refunded amount and the commission
 * change are guarded on the state that was read (a concurrent refund makes the write abort and the request
 * re-decide), the refund row is unique per sale and idempotency key, and the balance deduction, its ledger
 * row and the fitting of open withdrawals happen in the same transaction as the status change, and so are
 * the transition's in-app notifications written.
 */
export async function writeRefund(
  db: Database,
  w: RefundWrite,
  requestedCents: number | null,
  notificationsToWrite: readonly RefundNotification[],
  now: Date,
  /** Refunds sent together lock their partners' balances in this order (the partner's id). */
  lockOrder = 0,
  sending?: Sending,
): Promise<void> {
  const at = now.toISOString();
  const refundRow = { saleId: w.saleId, idempotencyKey: w.idempotencyKey };
  const c = w.commission;
  const values: RefundWriteValues = {
    refund: {
      saleId: w.saleId,
      expectedRefundedCents: w.expectedRefundedCents,
      commissionId: c?.id ?? null,
      idempotencyKey: w.idempotencyKey,
      refundId: w.refundId,
      requestedCents,
      amountCents: w.appliedCents,
      refundedTotalCents: w.newRefundedCents,
      deductionCents: c?.balanceDeductionCents ?? 0,
      reason: w.reason,
      refundReason: w.recordedReason,
      at,
    },
    ...(c && {
      commission: {
        commissionId: c.id,
        expectedVersion: c.expectedVersion,
        status: c.status,
        newDeductedCents: c.newDeductedCents,
        refundReason: w.recordedReason,
        flagForReview: c.flagForReview,
        at,
      },
      deduction:
        c.balanceDeductionCents > 0
          ? { commissionId: c.id, cents: c.balanceDeductionCents, ...refundRow, at }
          : null,
      webhook: { commissionId: c.id, ...refundRow, at },
    }),
    notifications:
      notificationsToWrite.length > 0
        ? { notifications: wellFormedJson(notificationsToWrite), ...refundRow, at }
        : null,
  };
  await refundWriteSent.send(db, values, lockOrder, sending);
}
