/**
 * Group commit within one isolate: statements of the same shape (a click's write, a lead's, a sale's or a
 * refund's read; "writes" below) that arrive while one is on its way to the database wait for it, and then go
 * together, as one statement and one transaction.
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
 * those fail rather than count twice.) A statement that answers each write's failure itself (a sale's or a
 * refund's write batch, `group-committed-write.ts`) sends them again only when the database refused the
 * whole batch, and otherwise fails them with its error (`resendAloneAfter`), as a lone write's request fails.
 *
 * The Workers runtime: an I/O object (a `fetch`, its body) belongs to the request that made it, a request's
 * pending I/O is cancelled once it has answered or its client has gone, and code resumed by a promise another
 * request resolved is not reliably back in its own request (under load on the local stack, such a request's
 * `fetch` failed with "Cannot perform I/O on behalf of a different request"). So no request ever resumes on
 * another's promise: a batch is sent by one of the requests in it, which waits for the whole batch before it
 * answers and keeps it alive with its `waitUntil` should its client go away; it only writes each write's
 * outcome where its request can read it. The others look on a timer of their own (a timer resumes the request
 * that set it): once their outcome is there they answer with it, and the first to see no batch on its way
 * sends the next. A look costs the worker a timer's wake-up and a turn of its one thread, so a waiting request
 * looks first when the batch on its way would end if it were as quick as the quicker of the recent ones, and
 * only then every `pollMs` (`recordDuration`). Should a batch never answer all the same (its sender's request
 * cut short), the requests waiting give up on it after `abandonAfterMs`: those whose writes were in it fail,
 * as when a database's answer is lost, and the queue moves on.
 */
export interface GroupCommitOptions<Item, Result> {
  /** Sends one write alone. */
  sendOne(item: Item): Promise<Result>;
  /** Sends several writes as one statement: one result per item, in the items' order. */
  sendMany(items: readonly Item[]): Promise<Result[]>;
  /** The most writes one batch takes (the rest wait for the next). */
  maxBatch: number;
  /** How often a waiting request looks whether its write's batch has ended. */
  pollMs: number;
  /** How long the requests waiting on a batch give it before they give it up. */
  abandonAfterMs: number;
  /**
   * Whether the writes of a batch that failed with this error are sent again, each alone (the default: always),
   * or fail with it. A write that must not be sent twice says no when the batch may have committed (its
   * answer lost): its request then fails as a lone write whose answer was lost does.
   */
  resendAloneAfter?: (error: unknown) => boolean;
  /**
   * Whether a write the batch answered with this result is sent again, alone (default: never): a result that
   * says the write was rolled back by what batching itself can cause, such as a deadlock with another batch.
   */
  resendAloneIf?: (result: Result) => boolean;
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

/** How many of the last batches' durations say when the next is likely to end. */
const RECENT_BATCHES = 8;

/** What keeps a request's work alive past its answer or its client (`ExecutionContext.waitUntil`). */
export type KeepAlive = (work: Promise<unknown>) => void;

export class GroupCommit<Item, Result> {
  private readonly queue: Waiting<Item, Result>[] = [];
  /** The batch on its way, if any. */
  private current: Batch<Item, Result> | undefined;
  /** Batches of two writes or more sent, and the writes they held (what a test or a log can read). */
  readonly sent = { batches: 0, writes: 0 };
  /** How many times a waiting request looked whether its batch had ended (what a test can read). */
  looks = 0;
  /** The durations of the last batches, in milliseconds, oldest first. */
  private readonly recentDurations: number[] = [];
  /** How long after a batch starts a request waiting on it looks first (see `recordDuration`). */
  private firstLookMs = 0;

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
        const now = Date.now();
        if (now - current.startedAt >= this.options.abandonAfterMs) {
          this.end(current, new Error("a batch of writes never answered"));
        } else {
          const untilFirstLook = current.startedAt + this.firstLookMs - now;
          const untilGivenUp = current.startedAt + this.options.abandonAfterMs - now;
          const sleepMs = Math.min(Math.max(this.options.pollMs, untilFirstLook), untilGivenUp);
          await new Promise((resume) => setTimeout(resume, sleepMs));
          this.looks += 1;
        }
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
        outcomes = results.map((value) =>
          this.options.resendAloneIf?.(value) ? { sendAlone: true as const } : { value },
        );
      } catch (error) {
        const resend = this.options.resendAloneAfter?.(error) ?? true;
        outcomes = batch.writes.map(() => (resend ? { sendAlone: true } : { error }));
      }
    }
    if (this.current !== batch) return; // given up on by the requests waiting: they have moved on
    this.recordDuration(Date.now() - batch.startedAt);
    batch.writes.forEach((w, i) => {
      w.outcome = outcomes[i];
    });
    this.end(batch);
  }

  /**
   * When a waiting request first looks: the second shortest of the last `RECENT_BATCHES` batches' durations,
   * once there are half as many (until then, every `pollMs`). A batch rarely ends sooner, so the look seldom
   * comes late, and one slow batch does not make the next ones' waiters sleep past their end.
   */
  private recordDuration(ms: number): void {
    this.recentDurations.push(ms);
    if (this.recentDurations.length > RECENT_BATCHES) this.recentDurations.shift();
    if (this.recentDurations.length < RECENT_BATCHES / 2) return;
    this.firstLookMs = [...this.recentDurations].sort((a, b) => a - b)[1] as number;
  }

  /** The batch is over (with the error its writes fail with, when it is given up): the next may go. */
  private end(batch: Batch<Item, Result>, givenUp?: Error): void {
    if (givenUp) {
      for (const w of batch.writes) w.outcome ??= { error: givenUp };
    }
    this.current = undefined;
  }
}
