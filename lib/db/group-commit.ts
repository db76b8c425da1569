/**
 * Group commit within one isolate: writes of the same shape that arrive while one is on its way to the
 * database wait for it, and then go together, as one statement and one transaction.
 *
 * Why: under load, most of what a click costs is not its insert but the round trip around it: the
 * worker's request and the answer's parsing, the SQL endpoint's handling, the statement's parse and the
 * commit's WAL flush (`npm run bench` prints the CPU of each process per request). Ten clicks sent together
 * pay those once. When nothing is on its way, a write goes at once and alone, as before: batching never
 * makes a lone request wait, and one that waits waits for at most one round trip already under way.
 *
 * Each write still gets its own result, and its request answers only once its batch has committed: a
 * click answered 200 is durable as before.
 *
 * Failure: a batch that fails sends each of its writes again alone, by its own request, so one write the
 * database refuses (a constraint, a value it cannot store) fails only its own request, with the error it
 * gives alone. A lone write that fails is not sent again: its error is the request's, as before. (A batch
 * whose answer was lost after its commit would have its writes sent again; a click's id is unique, so
 * those fail rather than count twice.)
 *
 * The Workers runtime: an I/O object (a `fetch`, its body) belongs to the request that made it, and a
 * request's pending I/O is cancelled once it has answered, or when its client goes away. So a batch is
 * always sent by one of the requests in it, which waits for the whole batch before it answers and keeps it
 * alive with its `waitUntil` should its client go away; the others wait on a promise of their own, which
 * the sender resolves (the runtime runs each waiter's continuation in its own request), and the next batch
 * is sent by a waiting request, never by one that has answered. Should a batch never answer all the same
 * (its sender's request cut short), the requests waiting give up on it after `abandonAfterMs`: those whose
 * writes were in it fail, as when a database's answer is lost, and the queue moves on.
 */
export interface GroupCommitOptions<Item, Result> {
  /** Sends one write alone. */
  sendOne(item: Item): Promise<Result>;
  /** Sends several writes as one statement: one result per item, in the items' order. */
  sendMany(items: readonly Item[]): Promise<Result[]>;
  /** The most writes one batch takes (the rest wait for the next). */
  maxBatch: number;
  /** How long the requests waiting on a batch give it before they give it up. */
  abandonAfterMs: number;
}

type Outcome<Result> = { value: Result } | { error: unknown } | { sendAlone: true };

interface Waiting<Item, Result> {
  item: Item;
  outcome?: Outcome<Result>;
}

interface Batch<Item, Result> {
  writes: Waiting<Item, Result>[];
  startedAt: number;
}

/** What keeps a request's work alive past its answer or its client (`ExecutionContext.waitUntil`). */
export type KeepAlive = (work: Promise<unknown>) => void;

export class GroupCommit<Item, Result> {
  private readonly queue: Waiting<Item, Result>[] = [];
  /** The batch on its way, if any. */
  private current: Batch<Item, Result> | undefined;
  /** Each waiting request's own wake-up, made in its own context (see above). */
  private wakeUps: (() => void)[] = [];
  /** Batches of two writes or more sent, and the writes they held (the tests read them). */
  readonly sent = { batches: 0, writes: 0 };

  constructor(private readonly options: GroupCommitOptions<Item, Result>) {
    if (options.maxBatch < 1) throw new Error("a batch takes at least one write");
  }

  /** Sends a write alone, at once, whatever is on its way (the group commit turned off). */
  sendAlone(item: Item): Promise<Result> {
    return this.options.sendOne(item);
  }

  async run(item: Item, keepAlive?: KeepAlive): Promise<Result> {
    const waiting: Waiting<Item, Result> = { item };
    this.queue.push(waiting);
    while (waiting.outcome === undefined) {
      const current = this.current;
      if (current) {
        await this.waitFor(current);
      } else {
        // Sent from the queue's head: this request's write is in the batch unless a full batch is ahead.
        const sending = this.sendNextBatch();
        keepAlive?.(sending);
        await sending;
      }
    }
    const outcome: Outcome<Result> = waiting.outcome;
    if ("value" in outcome) return outcome.value;
    if ("error" in outcome) throw outcome.error;
    return this.options.sendOne(item);
  }

  /** Until the batch on its way ends, or is given up. */
  private async waitFor(batch: Batch<Item, Result>): Promise<void> {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const woken = await new Promise<boolean>((resolve) => {
      this.wakeUps.push(() => resolve(true));
      const left = batch.startedAt + this.options.abandonAfterMs - Date.now();
      timer = setTimeout(() => resolve(false), Math.max(left, 0));
    });
    clearTimeout(timer);
    if (!woken && this.current === batch) this.end(batch, new Error("a batch of writes never answered"));
  }

  private async sendNextBatch(): Promise<void> {
    const batch: Batch<Item, Result> = {
      writes: this.queue.splice(0, this.options.maxBatch),
      startedAt: Date.now(),
    };
    this.current = batch;
    let outcomes: Outcome<Result>[];
    if (batch.writes.length === 1) {
      const [only] = batch.writes as [Waiting<Item, Result>];
      outcomes = [
        await this.options.sendOne(only.item).then(
          (value) => ({ value }),
          (error: unknown) => ({ error }),
        ),
      ];
    } else {
      this.sent.batches += 1;
      this.sent.writes += batch.writes.length;
      try {
        const results = await this.options.sendMany(batch.writes.map((w) => w.item));
        if (results.length !== batch.writes.length) {
          throw new Error(`a batch of ${batch.writes.length} writes answered ${results.length} results`);
        }
        outcomes = results.map((value) => ({ value }));
      } catch {
        outcomes = batch.writes.map(() => ({ sendAlone: true }));
      }
    }
    if (this.current !== batch) return; // given up on by the requests waiting: they have moved on
    batch.writes.forEach((w, i) => {
      w.outcome = outcomes[i];
    });
    this.end(batch);
  }

  /** The batch is over (with the error its writes fail with, when it is given up): the next may go. */
  private end(batch: Batch<Item, Result>, givenUp?: Error): void {
    if (givenUp) {
      for (const w of batch.writes) w.outcome ??= { error: givenUp };
    }
    this.current = undefined;
    const wakeUps = this.wakeUps;
    this.wakeUps = [];
    for (const wake of wakeUps) wake();
  }
}
