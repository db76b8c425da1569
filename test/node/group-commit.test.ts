/**
 * The group commit's scheduling (`lib/db/group-commit.ts`): who goes alone, who goes together, what each
 * write gets back, and what happens when a batch fails or never answers. The writes here are calls of
 * in-memory functions that answer when the test says so; the click's group commit on the real stack is
 * `test/node/group-commit-stack.test.ts`.
 */
import { describe, expect, it } from "vitest";
import { GroupCommit } from "../../lib/db/group-commit.ts";

interface Call {
  items: string[];
  answer(results?: string[]): void;
  fail(error: Error): void;
}

/** A database stand-in whose every call waits until the test answers it. */
function heldDatabase(
  options: {
    maxBatch?: number;
    abandonAfterMs?: number;
    resendAloneAfter?: (error: unknown) => boolean;
    resendAloneIf?: (result: string) => boolean;
  } = {},
) {
  const calls: Call[] = [];
  const call = (items: string[]) =>
    new Promise<string[]>((resolve, reject) => {
      calls.push({
        items,
        answer: (results) => resolve(results ?? items.map((item) => `${item}:ok`)),
        fail: reject,
      });
    });
  const commit = new GroupCommit<string, string>({
    sendOne: async (item) => {
      const [result] = await call([item]);
      return result as string;
    },
    sendMany: (items) => call([...items]),
    maxBatch: options.maxBatch ?? 10,
    pollMs: 1,
    abandonAfterMs: options.abandonAfterMs ?? 60_000,
    resendAloneAfter: options.resendAloneAfter,
    resendAloneIf: options.resendAloneIf,
  });
  return { calls, commit };
}

/** Long enough for the waiting writes to look again (every millisecond). */
const settled = () => new Promise((resolve) => setTimeout(resolve, 15));

/** Until the database stand-in has received `count` calls (the waiting writes look on their own timers). */
async function callsReach(calls: readonly Call[], count: number): Promise<void> {
  const deadline = Date.now() + 2_000;
  while (calls.length < count && Date.now() < deadline) await settled();
}

describe("GroupCommit", () => {
  it("sends a write at once and alone when nothing is on its way", async () => {
    const { calls, commit } = heldDatabase();
    const a = commit.run("a");
    await settled();
    expect(calls.map((c) => c.items)).toEqual([["a"]]);
    calls[0]?.answer();
    await expect(a).resolves.toBe("a:ok");
    expect(commit.sent).toEqual({ batches: 0, writes: 0 });
  });

  it("sends the writes that arrived meanwhile as one batch, in order, each with its own result", async () => {
    const { calls, commit } = heldDatabase();
    const a = commit.run("a");
    await settled();
    const rest = ["b", "c", "d"].map((item) => commit.run(item));
    await settled();
    expect(calls).toHaveLength(1);
    calls[0]?.answer();
    await expect(a).resolves.toBe("a:ok");
    await callsReach(calls, 2);
    expect(calls.map((c) => c.items)).toEqual([["a"], ["b", "c", "d"]]);
    calls[1]?.answer(["b:1", "c:2", "d:3"]);
    await expect(Promise.all(rest)).resolves.toEqual(["b:1", "c:2", "d:3"]);
    expect(commit.sent).toEqual({ batches: 1, writes: 3 });
  });

  it("takes at most maxBatch writes at once; the rest go next", async () => {
    const { calls, commit } = heldDatabase({ maxBatch: 2 });
    const all = ["a", "b", "c", "d", "e"].map((item) => commit.run(item));
    for (let i = 0; i < 3; i++) {
      await callsReach(calls, i + 1);
      calls[i]?.answer();
    }
    await expect(Promise.all(all)).resolves.toEqual(["a:ok", "b:ok", "c:ok", "d:ok", "e:ok"]);
    expect(calls.map((c) => c.items)).toEqual([["a"], ["b", "c"], ["d", "e"]]);
  });

  it("sends each write of a failed batch again alone: one the database refuses fails alone", async () => {
    const { calls, commit } = heldDatabase();
    const a = commit.run("a");
    await settled();
    const rest = ["b", "bad", "c"].map((item) => commit.run(item).catch((error: Error) => error.message));
    calls[0]?.answer();
    await callsReach(calls, 2);
    expect(calls[1]?.items).toEqual(["b", "bad", "c"]);
    calls[1]?.fail(new Error("batch refused"));
    await callsReach(calls, 5);
    const alone = calls.slice(2);
    expect(alone.map((c) => c.items).sort()).toEqual([["b"], ["bad"], ["c"]]);
    for (const call of alone) {
      if (call.items[0] === "bad") call.fail(new Error("bad refused"));
      else call.answer();
    }
    await expect(a).resolves.toBe("a:ok");
    await expect(Promise.all(rest)).resolves.toEqual(["b:ok", "bad refused", "c:ok"]);
  });

  it("does not send a lone write again when it fails", async () => {
    const { calls, commit } = heldDatabase();
    const a = commit.run("a");
    await settled();
    calls[0]?.fail(new Error("lost"));
    await expect(a).rejects.toThrow("lost");
    await settled();
    expect(calls).toHaveLength(1);
  });

  it("sends each write alone when a batch answers a wrong number of results", async () => {
    const { calls, commit } = heldDatabase();
    const a = commit.run("a");
    await settled();
    const rest = ["b", "c"].map((item) => commit.run(item));
    calls[0]?.answer();
    await callsReach(calls, 2);
    calls[1]?.answer(["b:only"]);
    await callsReach(calls, 4);
    calls[2]?.answer();
    calls[3]?.answer();
    await expect(Promise.all([a, ...rest])).resolves.toEqual(["a:ok", "b:ok", "c:ok"]);
  });

  it("gives up on a batch that never answers: the queue moves on, its writes fail, its late answer is dropped", async () => {
    const { calls, commit } = heldDatabase({ abandonAfterMs: 50 });
    const a = commit.run("a").catch((error: Error) => error.message);
    await settled();
    const b = commit.run("b");
    // b waited 50 ms on a's call, gave it up and went on its own.
    await new Promise((resolve) => setTimeout(resolve, 80));
    expect(calls.map((c) => c.items)).toEqual([["a"], ["b"]]);
    calls[1]?.answer();
    await expect(b).resolves.toBe("b:ok");
    // The stuck call answers after all: its write has failed already, as when an answer is lost.
    calls[0]?.answer();
    await expect(a).resolves.toBe("a batch of writes never answered");
    const c = commit.run("c");
    await callsReach(calls, 3);
    calls[2]?.answer();
    await expect(c).resolves.toBe("c:ok");
  });

  it("fails each write of a failed batch with its error when the writes must not go twice (resendAloneAfter)", async () => {
    const { calls, commit } = heldDatabase({
      resendAloneAfter: (error) => (error as Error).message === "refused whole",
    });
    const a = commit.run("a");
    await settled();
    const lost = ["b", "c"].map((item) => commit.run(item).catch((error: Error) => error.message));
    calls[0]?.answer();
    await callsReach(calls, 2);
    calls[1]?.fail(new Error("answer lost"));
    await expect(Promise.all(lost)).resolves.toEqual(["answer lost", "answer lost"]);
    await settled();
    expect(calls).toHaveLength(2);

    const x = commit.run("x");
    await callsReach(calls, 3);
    const refused = ["d", "e"].map((item) => commit.run(item));
    await settled();
    calls[2]?.answer();
    await callsReach(calls, 4);
    expect(calls[3]?.items).toEqual(["d", "e"]);
    calls[3]?.fail(new Error("refused whole"));
    await callsReach(calls, 6);
    for (const call of calls.slice(4)) call.answer();
    await expect(Promise.all([a, x, ...refused])).resolves.toEqual(["a:ok", "x:ok", "d:ok", "e:ok"]);
  });

  it("sends again alone a write whose result in a batch says so (resendAloneIf); the others keep theirs", async () => {
    const { calls, commit } = heldDatabase({ resendAloneIf: (result) => result.endsWith(":rolled back") });
    const a = commit.run("a");
    await settled();
    const rest = ["b", "c"].map((item) => commit.run(item));
    calls[0]?.answer();
    await callsReach(calls, 2);
    calls[1]?.answer(["b:1", "c:rolled back"]);
    await callsReach(calls, 3);
    expect(calls[2]?.items).toEqual(["c"]);
    calls[2]?.answer(["c:alone"]);
    await expect(Promise.all([a, ...rest])).resolves.toEqual(["a:ok", "b:1", "c:alone"]);
    // A lone write's result is its own, whatever it says.
    const d = commit.run("d");
    await callsReach(calls, 4);
    calls[3]?.answer(["d:rolled back"]);
    await expect(d).resolves.toBe("d:rolled back");
  });

  it("looks first when a batch as quick as the recent ones would end, then every pollMs", async () => {
    // A database that answers every call after 20 ms: polling every millisecond, each write waiting on a
    // batch would look about 20 times.
    const answerAfterMs = 20;
    const answerLater = (items: readonly string[]) =>
      new Promise<string[]>((resolve) =>
        setTimeout(() => resolve(items.map((i) => `${i}:ok`)), answerAfterMs),
      );
    const commit = new GroupCommit<string, string>({
      sendOne: async (item) => (await answerLater([item]))[0] as string,
      sendMany: answerLater,
      maxBatch: 10,
      pollMs: 1,
      abandonAfterMs: 60_000,
    });
    // Four writes at once, ten times: one goes alone, the three others wait for it and then go together.
    const round = () => Promise.all(["a", "b", "c", "d"].map((item) => commit.run(item)));
    const looksBefore: number[] = [];
    for (let i = 0; i < 10; i++) {
      looksBefore.push(commit.looks);
      await expect(round()).resolves.toEqual(["a:ok", "b:ok", "c:ok", "d:ok"]);
    }
    // The first round, before four durations are known, looks every millisecond: three writes wait 20 ms on
    // the lone write's batch, and two of them 20 ms more on their own (about 100 looks; fewer when timers
    // fire late on a busy machine).
    const early = (looksBefore[1] as number) - (looksBefore[0] as number);
    expect(early).toBeGreaterThan(30);
    // Later rounds look first at about 20 ms into each batch they wait on, then every millisecond: about 5.
    const latePerRound = (commit.looks - (looksBefore[6] as number)) / 4;
    expect(latePerRound).toBeLessThan(early / 3);
  });
});
