import type { Database } from "./client.ts";
import { isRolledBackForAnother, pgErrorOf } from "./errors.ts";
import { groupCommitPerDatabase, type Sending } from "./group-committed-statement.ts";
import {
  type BatchableWrite,
  type KeptPlanWriteBatch,
  keptPlanWriteBatch,
  type SequenceValuesOf,
} from "./kept-plan-write-batch.ts";

type AnySequence = BatchableWrite<never>;
type ValuesOf<Sequence> = SequenceValuesOf<Sequence>;

/**
 * A write the database refused inside a write batch, rolled back alone: its SQLSTATE, message and constraint,
 * as the driver's error of the same write sent alone carries them (`pgErrorOf` reads them, so the conflict
 * retries and the routes' error handling treat both alike).
 */
export class BatchedWriteError extends Error {
  readonly code: string;
  readonly constraint: string | undefined;

  constructor(code: string, message: string, constraint: string | null) {
    super(message);
    this.name = "BatchedWriteError";
    this.code = code;
    this.constraint = constraint ?? undefined;
  }
}

/** The most writes one batch takes: each runs in a subtransaction, and PostgreSQL keeps 64 per backend cached. */
const MAX_PER_BATCH = 16;

interface Item<Values> {
  values: Values;
  /** Batches lock shared rows (a partner's balance) in this order, so two batches take them in one order. */
  lockOrder: number;
}

type Outcome<Row> = { row: Row } | { failed: BatchedWriteError };

/**
 * A write sequence of one row per call (a server lead's, a sale's or a refund's whole write), sent through the
 * isolate's group commit (`group-commit.ts`): alone, as the sequence's call, when no write of its kind is on
 * its way; else with those that arrived meanwhile, as one call of its write batch (`kept-plan-write-batch.ts`,
 * the function `functionName`): one transaction, each write in a subtransaction of its own, each request
 * getting its own row or its own error. Without `sending`, or with the group commit off, always alone.
 *
 * A write the batch rolled back to end a deadlock or a serialization failure is sent again, alone. A batch the
 * database refused whole (an error outside any item) is rolled back: its writes are sent again, each alone. A
 * batch whose answer never came (the network, a lost answer) may have committed: its writes fail with that
 * error, as a lone write's would, and are not sent again (the sale's retry then finds its sale recorded, the
 * refund's its refund applied, as after a lone write's lost answer).
 */
export function groupCommittedWrite<const Sequence extends AnySequence, Row>(spec: {
  /** The batch's function (a migration defines it, `kept-plan-write-batch.ts`). */
  functionName: string;
  sequence: Sequence;
  what: string;
  /** The batch's own order of its items, when the worker cannot give one (`keptPlanWriteBatch`). */
  lockOrder?: (item: string) => string;
}): {
  /** The batch, for the migrations' check (`lib/kept-plan-statements.ts`). */
  batch: KeptPlanWriteBatch<Sequence>;
  send: (db: Database, values: ValuesOf<Sequence>, lockOrder: number, sending?: Sending) => Promise<Row>;
} {
  const { what, sequence } = spec;
  const batch = keptPlanWriteBatch({ functionName: spec.functionName, sequence, lockOrder: spec.lockOrder });

  const sendOne = async (db: Database, item: Item<ValuesOf<Sequence>>): Promise<Outcome<Row>> => {
    const row = (await db.execute<Row & Record<string, unknown>>(sequence.call(item.values as never)))
      .rows[0];
    if (!row) throw new Error(`${what} returned no row`);
    return { row };
  };

  const sendMany = async (db: Database, items: readonly Item<ValuesOf<Sequence>>[]) => {
    const order = items
      .map((item, index) => ({ item, index }))
      .sort((a, b) => a.item.lockOrder - b.item.lockOrder);
    const { rows } = await db.execute<
      Row & {
        batch_item: number | string;
        failed_code: string | null;
        failed_message: string | null;
        failed_constraint: string | null;
      }
    >(batch.call(order.map(({ item }) => item.values as never)));
    if (rows.length !== items.length) {
      throw new Error(`a batch of ${items.length} writes of ${what} answered ${rows.length} rows`);
    }
    const outcomes: Outcome<Row>[] = [];
    for (const { batch_item, failed_code, failed_message, failed_constraint, ...row } of rows) {
      const sent = order[Number(batch_item)];
      if (!sent || outcomes[sent.index]) throw new Error(`a batch of ${what} answered item ${batch_item}`);
      outcomes[sent.index] =
        failed_code === null
          ? { row: row as Row }
          : { failed: new BatchedWriteError(failed_code, failed_message ?? "", failed_constraint) };
    }
    return outcomes;
  };

  const sendThrough = groupCommitPerDatabase<Item<ValuesOf<Sequence>>, Outcome<Row>>((db) => ({
    sendOne: (item) => sendOne(db, item),
    sendMany: (items) => sendMany(db, items),
    maxBatch: MAX_PER_BATCH,
    pollMs: 1,
    abandonAfterMs: 10_000,
    // Refused whole by the database: rolled back, so each may go again alone. Anything else: unknown.
    resendAloneAfter: (error) => pgErrorOf(error)?.code !== undefined,
    // Rolled back to end a deadlock or a serialization failure: likelier in a batch than alone (a batch holds
    // every item's locks until it commits), so the write is sent again, alone.
    resendAloneIf: (outcome) => "failed" in outcome && isRolledBackForAnother(outcome.failed.code),
  }));

  const send = async (
    db: Database,
    values: ValuesOf<Sequence>,
    lockOrder: number,
    sending?: Sending,
  ): Promise<Row> => {
    const outcome = await sendThrough(db, { values, lockOrder }, sending);
    if ("failed" in outcome) throw outcome.failed;
    return outcome.row;
  };
  return { batch, send };
}
