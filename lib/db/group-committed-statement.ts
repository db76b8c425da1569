import type { Database } from "./client.ts";
import { GroupCommit, type GroupCommitOptions, type KeepAlive } from "./group-commit.ts";
import type { KeptPlanStatement } from "./kept-plan.ts";
import { type ItemValues, type KeptPlanBatch, keptPlanBatch } from "./kept-plan-batch.ts";

/** How a request sends its statement: through the isolate's group commit or alone (`GROUP_COMMIT=off`). */
export interface Sending {
  groupCommit: boolean;
  /** The request's `waitUntil`: keeps a batch it sends alive should its client go away. */
  keepAlive: KeepAlive;
}

/**
 * A sender of one kind of statement through a group commit of each database client (in a worker, the
 * isolate's one), made on first use: through it when the request's `sending` says so, else alone.
 */
export function groupCommitPerDatabase<Item, Result>(
  options: (db: Database) => GroupCommitOptions<Item, Result>,
): (db: Database, item: Item, sending?: Sending) => Promise<Result> {
  const commits = new WeakMap<Database, GroupCommit<Item, Result>>();
  return (db, item, sending) => {
    let commit = commits.get(db);
    if (!commit) {
      commit = new GroupCommit(options(db));
      commits.set(db, commit);
    }
    return sending?.groupCommit ? commit.run(item, sending.keepAlive) : commit.sendAlone(item);
  };
}

/** The most calls one batch takes: about what an isolate serves in one round trip, and then some. */
const MAX_PER_BATCH = 32;

/**
 * A kept-plan statement of one row per call, sent through the isolate's group commit (`group-commit.ts`):
 * alone, as its own function's call, when nothing is on its way; else with the calls that arrived meanwhile,
 * as one call of its batch (`kept-plan-batch.ts`, the function `functionName`), each caller getting its own
 * row. Without `sending`, or with the group commit off, always alone. `what` names the statement in the
 * error of a call that returned no row.
 */
export function groupCommittedStatement<const Names extends readonly string[], Row>(spec: {
  /** The batch's function (a migration defines it, `kept-plan-batch.ts`). */
  functionName: string;
  statement: KeptPlanStatement<Names>;
  what: string;
  /** A read of one row per call: its batch runs as one statement over the calls (`kept-plan-batch.ts`). */
  inlined?: boolean;
}): {
  /** The batch, for the migrations' check (`lib/kept-plan-statements.ts`). */
  batch: KeptPlanBatch<Names>;
  send: (db: Database, values: ItemValues<Names>, sending?: Sending) => Promise<Row>;
} {
  const { what } = spec;
  const batch = keptPlanBatch(spec);
  const send = groupCommitPerDatabase<ItemValues<Names>, Row>((db) => ({
    sendOne: async (values) => {
      const row = (await db.execute<Row & Record<string, unknown>>(batch.statement.call(values))).rows[0];
      if (!row) throw new Error(`${what} returned no row`);
      return row;
    },
    sendMany: async (items) => {
      const { rows } = await db.execute<Row & { batch_item: number }>(batch.call(items));
      const byItem: Row[] = [];
      for (const { batch_item, ...row } of rows) byItem[batch_item] = row as Row;
      const complete = byItem.length === items.length && !byItem.includes(undefined as Row);
      if (rows.length !== items.length || !complete) {
        throw new Error(`a batch of ${items.length} calls of ${what} answered ${rows.length} rows`);
      }
      return byItem;
    },
    maxBatch: MAX_PER_BATCH,
    pollMs: 1,
    abandonAfterMs: 10_000,
  }));
  return { batch, send };
}
