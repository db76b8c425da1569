import { sql } from "drizzle-orm";
import { alias } from "drizzle-orm/pg-core";
import { commissions } from "../../schema/commissions.ts";
import { saleEvents } from "../../schema/events.ts";
import { apiKeyRecordFromRow } from "../auth/program-key.ts";
import type { Database } from "../db/client.ts";
import { fromDriverOrNull } from "../db/columns.ts";
import { isRefusedAndKeptNothing, pgErrorOf } from "../db/errors.ts";
import type { Sending } from "../db/group-committed-statement.ts";
import { groupCommittedWrite } from "../db/group-committed-write.ts";
import { keptPlanStatement } from "../db/kept-plan.ts";
import { keptPlanProcedure, type ProcedureValues } from "../db/kept-plan-procedure.ts";
import type { Logger } from "../log.ts";
import type { RefundOutcome } from "./apply-refund.ts";
import { decideRefund, type RefundIntent, repeatOf } from "./decide-refund.ts";
import { PAID_OUT_REVIEW_ACTION } from "./refund-notifications.ts";
import {
  deductionStatement,
  keyProgramSaleNamed,
  type RefundRead,
  recordRefundStatement,
  refundCommissionStatement,
  refundFactsFromRow,
  refundFactsStatement,
  refundNotificationsStatement,
  refundSale,
  refundWebhookStatement,
} from "./refund-store.ts";

/**
 * The refund of the endpoint decided and written in ONE round trip, for the common refund: a live key's
 * refund of a sale that has its commission (or none), not a repeat of a refund already applied. The function
 * reads the facts as the refund's read does (`read_refund_and_repeats`), applies the commission state table of
 * `decideRefund` (the proportional reduction, a pending commission cancelled whole, the deduction from a
 * credited balance, the status), and writes it as the refund's write does (`write_refund`'s steps, each its
 * kept-plan function, the notifications included). Anything else (an unknown or test key, no sale, a repeat,
 * a reversed commission, a commission awaiting repair, nothing left to refund) it leaves alone and answers the
 * facts it read, which the route then decides in TypeScript as before: no round trip more than before, one
 * fewer for the common refund. As for the sale (`sale-at-once.ts`), TypeScript stays the rules' source: the
 * route decides again on the facts read and refuses the request if its decision is not the one written
 * (`refund-at-once.test.ts` compares both ways on twin programs).
 */
const NAMES = [
  "key_hash",
  "transaction_id",
  "repeat_key",
  "repeat_amount_cents",
  "intent_amount_cents",
  "requested_cents",
  "refund_id",
  "reason",
  "recorded_reason",
  "now_at",
] as const;

const quoted = (text: string) => `'${text.replaceAll("'", "''")}'`;
/** `reductionAt` of `decideRefund`: the commission's total reduction once `refunded` of the sale is refunded. */
const reductionAt = (refunded: string) =>
  `CASE WHEN ${refunded} >= sale_amount THEN commission_amount ` +
  `ELSE div(2 * commission_amount * ${refunded} + sale_amount, 2 * sale_amount) END`;

export const refundAtOnce = keptPlanProcedure({
  functionName: "record_refund_at_once",
  names: NAMES,
  types: {
    key_hash: "text",
    transaction_id: "text",
    repeat_key: "text",
    repeat_amount_cents: "bigint",
    intent_amount_cents: "bigint",
    requested_cents: "bigint",
    refund_id: "text",
    reason: "text",
    recorded_reason: "text",
    now_at: "timestamp with time zone",
  },
  returns: [
    ["refund_written", "boolean"],
    ["refund_status", "text"],
    ["deduction_cents", "bigint"],
    ["commission_id", "bigint"],
    ...refundFactsStatement.resultColumns.map(([name, type]) => [`facts_${name}`, type] as const),
  ],
  declare: `  facts record;
  commission json;
  sale_id bigint;
  sale_amount numeric;
  refunded numeric;
  applied numeric;
  new_refunded numeric;
  commission_amount numeric;
  deducted numeric;
  target numeric;
  new_deducted numeric;
  balance_deduction numeric;
  credited boolean;
  payload jsonb;
`,
  runsFirst: [
    {
      statement: refundFactsStatement,
      values: ["key_hash", "transaction_id", "repeat_key", "repeat_amount_cents"],
    },
  ],
  body: `  SELECT * INTO facts FROM ${refundFactsStatement.functionName}(key_hash, transaction_id, repeat_key, repeat_amount_cents);
  facts_key := facts.key;
  facts_sale := facts.sale;
  refund_written := false;
  <<decided>>
  BEGIN
    -- A live key, not retired, and its program's sale.
    IF facts.key IS NULL OR facts.sale IS NULL OR (facts.key->>'is_test')::boolean THEN EXIT decided; END IF;
    IF date_trunc('milliseconds', (facts.key->>'rotate_by')::timestamptz) <= now_at THEN EXIT decided; END IF;
    IF json_typeof(facts.sale->'commission') = 'object' THEN commission := facts.sale->'commission'; END IF;
    -- Skipped (reversed, or a repeat: the read answers only the refunds this one repeats) or awaiting repair.
    IF commission->>'status' = 'reversed' OR (facts.sale->>'needs_commission')::boolean
       OR json_array_length(facts.sale->'refunds') > 0 THEN EXIT decided; END IF;
    sale_id := (facts.sale->>'id')::bigint;
    sale_amount := (facts.sale->>'amount_cents')::numeric;
    refunded := (facts.sale->>'refunded_cents')::numeric;
    -- Omitted or 0: everything left.
    applied := CASE WHEN coalesce(intent_amount_cents, 0) = 0 THEN sale_amount - refunded
                    ELSE least(intent_amount_cents, sale_amount - refunded) END;
    new_refunded := refunded + applied;
    IF commission IS NULL OR (commission->>'is_test')::boolean THEN
      IF applied = 0 THEN EXIT decided; END IF;
      PERFORM ${recordRefundStatement.functionName}(sale_id, refunded::bigint, NULL, repeat_key, refund_id, requested_cents,
        applied::bigint, new_refunded::bigint, 0, reason, recorded_reason, now_at);
      refund_status := 'no_commission';
    ELSE
      commission_id := (commission->>'id')::bigint;
      commission_amount := (commission->>'amount_cents')::numeric;
      deducted := (commission->>'deducted_cents')::numeric;
      credited := (commission->>'credited')::boolean;
      target := ${reductionAt("new_refunded")};
      -- A pending commission is cancelled whole on any refund: nothing was credited, so nothing is taken.
      new_deducted := CASE WHEN commission->>'status' = 'pending' THEN commission_amount ELSE greatest(target, deducted) END;
      refund_status := CASE WHEN new_refunded >= sale_amount THEN 'reversed' ELSE 'refunded' END;
      balance_deduction := CASE WHEN credited THEN new_deducted - deducted ELSE 0 END;
      deduction_cents := CASE WHEN credited THEN new_deducted - deducted
                              ELSE greatest(0, target - ${reductionAt("refunded")}) END;
      PERFORM ${recordRefundStatement.functionName}(sale_id, refunded::bigint, commission_id, repeat_key, refund_id,
        requested_cents, applied::bigint, new_refunded::bigint, balance_deduction::bigint, reason, recorded_reason, now_at);
      PERFORM ${refundCommissionStatement.functionName}(commission_id, (commission->>'version')::integer, refund_status,
        new_deducted::bigint, recorded_reason, (commission->>'paid_out')::boolean, now_at);
      IF balance_deduction > 0 THEN
        PERFORM ${deductionStatement.functionName}(commission_id, balance_deduction::bigint, sale_id, repeat_key, now_at);
      END IF;
      PERFORM ${refundWebhookStatement.functionName}(commission_id, sale_id, repeat_key, now_at);
      -- refundNotifications: the partner's, and the advertiser's review of a paid-out commission.
      IF commission->>'partner_id' IS NOT NULL THEN
        payload := jsonb_build_object('commission_id', commission_id, 'status', refund_status,
          'deduction_cents', deduction_cents, 'currency', facts.sale->>'currency', 'reason', recorded_reason);
        PERFORM ${refundNotificationsStatement.functionName}(
          jsonb_build_array(jsonb_build_object('recipient_type', 'partner',
            'recipient_id', (commission->>'partner_id')::integer, 'program_id', (facts.sale->>'program_id')::integer,
            'kind', 'commission_' || refund_status, 'payload', payload))
          || CASE WHEN (commission->>'paid_out')::boolean THEN
               jsonb_build_array(jsonb_build_object('recipient_type', 'advertiser',
                 'recipient_id', (facts.sale->>'advertiser_id')::integer, 'program_id', (facts.sale->>'program_id')::integer,
                 'kind', 'paid_commission_reversed_review',
                 'payload', payload || jsonb_build_object('partner_id', (commission->>'partner_id')::integer,
                   'action', ${quoted(PAID_OUT_REVIEW_ACTION)})))
             ELSE '[]'::jsonb END,
          sale_id, repeat_key, now_at);
      END IF;
    END IF;
    refund_written := true;
  END;
  RETURN NEXT;
`,
});

const m = alias(commissions, "m");

/**
 * The partner a refund decided at once would take from, as its read finds the sale (`read_refund_and_repeats`:
 * the key's program's sale by that id or another id of the payment, a live sale before a test one): the order
 * a batch of them runs in, as `write_refunds` sorts by partner (see `sale_lock_order`).
 */
export const refundLockOrder = keptPlanStatement({
  functionName: "refund_lock_order",
  names: ["keyHash", "transactionId"],
  parameterTypes: { keyHash: "text", transactionId: "text" },
  returns: [["partner_id", "integer"]],
  build: (q) => sql`
    select ${m.partnerId} as partner_id from ${saleEvents} ${refundSale} join ${commissions} ${m} on ${m.saleId} = ${refundSale.id}
    where ${keyProgramSaleNamed(q.keyHash, q.transactionId)}
    order by ${refundSale.isTest}, ${refundSale.id}
    limit 1`,
});

const valueAt = (item: string, name: (typeof NAMES)[number]) => `${item}->0->>${NAMES.indexOf(name)}`;

type RefundAtOnceRow = {
  refund_written: boolean;
  refund_status: string | null;
  deduction_cents: unknown;
  commission_id: unknown;
  facts_key: Parameters<typeof apiKeyRecordFromRow>[0] | null;
  facts_sale: Record<string, unknown> | null;
};

/** Refunds decided at once arriving together: one call of `record_refunds_at_once`, in their partners' order. */
export const refundAtOnceSent = groupCommittedWrite<typeof refundAtOnce, RefundAtOnceRow>({
  functionName: "record_refunds_at_once",
  sequence: refundAtOnce,
  what: "the refund decided and written at once",
  lockOrder: (item) =>
    `(SELECT guess.partner_id FROM ${refundLockOrder.functionName}(${valueAt(item, "key_hash")}, ` +
    `${valueAt(item, "transaction_id")}) guess)`,
});

/** The procedure's values for a refund of `transactionId` with this intent. */
export function refundAtOnceValues(input: {
  keyHash: string;
  transactionId: string;
  intent: RefundIntent;
  now: Date;
}): ProcedureValues<typeof NAMES> {
  const { intent } = input;
  const repeat = repeatOf(intent);
  const full = intent.amountCents === null || intent.amountCents === 0;
  return {
    key_hash: input.keyHash,
    transaction_id: input.transactionId,
    repeat_key: repeat.idempotencyKey,
    repeat_amount_cents: repeat.amountCents,
    intent_amount_cents: intent.amountCents,
    // As `decideRefund` and `writeRefund` write them.
    requested_cents: intent.amountCents || null,
    refund_id: full ? null : intent.refundId,
    reason: intent.reason,
    recorded_reason: intent.refundReason?.trim() || intent.reason,
    now_at: input.now.toISOString(),
  };
}

export interface RefundAtOnce {
  /** What the refund's read would have answered. */
  read: RefundRead;
  /** Set when the database decided and wrote the refund; unset: `read` is for the rules. */
  written: { status: string; deductionCents: number | null; commissionId: number | null } | null;
}

/** One round trip: the refund written, or the facts it was read with. */
export async function recordRefundAtOnce(
  db: Database,
  input: Parameters<typeof refundAtOnceValues>[0],
  sending?: Sending,
): Promise<RefundAtOnce> {
  const row = await refundAtOnceSent.send(db, refundAtOnceValues(input), 0, sending);
  const key = apiKeyRecordFromRow(row.facts_key ?? undefined);
  const read: RefundRead = row.facts_sale
    ? { key, ...refundFactsFromRow(row.facts_sale) }
    : { key, facts: null, parties: null };
  return {
    read,
    written: row.refund_written
      ? {
          status: row.refund_status ?? "",
          deductionCents: fromDriverOrNull(commissions.deductedCents, row.deduction_cents),
          commissionId: fromDriverOrNull(commissions.id, row.commission_id),
        }
      : null,
  };
}

/**
 * The refund decided and written by the database in one round trip: the outcome, which the rules decide again
 * on the facts the database read and which must be the one it wrote, with that read (for the key's notice); or,
 * when the database left the refund to the rules, the read alone. Unset: the database refused the write (a guard
 * or a unique index that found the sale changed, a value refused): the refund is then read, decided and written
 * the usual way, whose retries say what the answer is. A lost answer fails as the usual write's would.
 */
export async function refundDecidedAtOnce(
  db: Database,
  input: Parameters<typeof refundAtOnceValues>[0],
  log: Logger,
  /** Told the read of a refund written, before any answer (the route's key notice). */
  onWritten: (read: RefundRead) => void,
  sending?: Sending,
): Promise<{ read: RefundRead; outcome?: RefundOutcome } | undefined> {
  let atOnce: RefundAtOnce;
  try {
    atOnce = await recordRefundAtOnce(db, input, sending);
  } catch (error) {
    if (!isRefusedAndKeptNothing(error)) throw error;
    log.warn("the refund decided at once was refused by the database; decided anew", {
      pg_code: pgErrorOf(error)?.code,
    });
    return undefined;
  }
  const { read, written } = atOnce;
  if (!written) return { read };
  onWritten(read);
  const decision = read.facts ? decideRefund(read.facts, input.intent) : null;
  let outcome: RefundOutcome | null = null;
  if (decision?.outcome === "no_commission" && written.status === "no_commission") {
    outcome = { status: "no_commission" };
  } else if (
    decision?.outcome === "applied" &&
    decision.status === written.status &&
    decision.deductionCents === written.deductionCents &&
    decision.commissionId === written.commissionId
  ) {
    outcome = {
      status: decision.status,
      deductionCents: decision.deductionCents,
      commissionId: decision.commissionId,
    };
  }
  if (!outcome) {
    // Never expected (`refund-at-once.test.ts`): the refund is written; the request fails rather than answer
    // what was not written.
    log.error("the database decided the refund otherwise than the rules", undefined, {
      outcome: decision?.outcome ?? "no_sale",
      refund_status: written.status,
      commission_id: written.commissionId,
    });
    throw new Error("refund decided otherwise in the database");
  }
  return { read, outcome };
}
