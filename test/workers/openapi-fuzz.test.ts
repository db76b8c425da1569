import { SELF } from "cloudflare:test";
import { env } from "cloudflare:workers";
import fc from "fast-check";
import { beforeAll, describe, expect, it } from "vitest";
import { type FuzzRequest, requestArbitrary } from "./fuzz-arbitraries.ts";
import {
  answerProblems,
  type FuzzTarget,
  fuzzTarget,
  refusalMayWrite,
  routedOperation,
  rowCounts,
  send,
} from "./fuzz-target.ts";
import { loadDocument, type OpenApiDocument, type Operation, operationsOf } from "./openapi-schemas.ts";

/**
 * Property-based fuzzing of the API and tracking workers from their OpenAPI document: every documented
 * operation gets requests generated from its schemas and from outside them (see fuzz-arbitraries.ts), with
 * and without a valid program key or sign-in token. For each answer: never a 5xx, a documented status whose
 * body the document's schema accepts, the route family's error envelope, the rate-limit and request-id
 * headers, and for a refusal, no row written (counts of the program's, workspace's and owner's rows before
 * and after).
 *
 * CI runs `FUZZ_RUNS` unset: 400 requests (10 per operation), fixed seed. A nightly run sets e.g.
 * FUZZ_RUNS=20000.
 */
const runs = Number(env.FUZZ_RUNS) > 0 ? Number(env.FUZZ_RUNS) : 400;
/**
 * CI's run is deterministic (a fixed seed: a red CI always means a change, never a new draw); a nightly run
 * (FUZZ_RUNS set) draws a fresh seed each time to explore, and prints it; FUZZ_SEED replays one. One seed for
 * the whole run, printed before it starts: every operation's draw then depends on it alone, so a replay with
 * the same FUZZ_RUNS meets the same state the earlier operations left (a seed per operation could not).
 */
const ciSeed = 20261124;
const seed =
  Number(env.FUZZ_SEED) || (Number(env.FUZZ_RUNS) > 0 ? Math.floor(Math.random() * 2 ** 31) : ciSeed);
/**
 * CI's run goes through the runtime's entrypoint (`SELF`); a longer one calls the worker's fetch handler, since
 * the test pool's entrypoint slows down with every request and fails after about 1,800 (see `send`).
 */
const via = runs > 400 ? "handler" : "entrypoint";
/** The test's budget: 1 s a request (a loaded 2-core machine answers in about 0.1 s), at least 2 minutes. */
const budgetMs = Math.max(120_000, runs * 1_000);

let document: OpenApiDocument;
let operations: Operation[];
let target: FuzzTarget;

beforeAll(async () => {
  document = await loadDocument(SELF);
  // The events worker's route is fuzzed in its own project (test/stripe-events/webhook-fuzz.test.ts).
  // Signing out and regenerating keys end the fuzzer's own credentials: those operations go last.
  const ending = (o: Operation) => /sign-out|regenerate|logout/.test(o.path);
  operations = operationsOf(document)
    .filter((o) => o.path.startsWith("/api/"))
    .sort((a, b) => Number(ending(a)) - Number(ending(b)));
  target = await fuzzTarget();
});

/** A hang is a failure too, reported with the request that caused it. */
async function within<T>(work: Promise<T>, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer in 10 s: ${what}`)), 10_000);
  });
  try {
    return await Promise.race([work, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** Where a long run's time goes: answering, and counting rows around each refusal (reset per operation). */
const spent = { answeringMs: 0, countingMs: 0 };

async function timed<T>(work: () => Promise<T>, what: keyof typeof spent): Promise<T> {
  const startedAt = Date.now();
  try {
    return await work();
  } finally {
    spent[what] += Date.now() - startedAt;
  }
}

async function holds(request: FuzzRequest): Promise<void> {
  const before = await timed(() => within(rowCounts(target), "counting rows before"), "countingMs");
  const answer = await timed(() => within(send(request, via), `answering ${request.shape}`), "answeringMs");
  const problems = answerProblems(document, operations, request.method, request.url, answer);
  const operation = routedOperation(operations, request.method, new URL(request.url).pathname);
  const route = operation ? `${operation.method} ${operation.path}` : "unrouted";
  if (answer.status >= 400 && !refusalMayWrite(route, answer.status, answer.body)) {
    const after = await timed(
      () => within(rowCounts(target), `counting rows after ${request.shape}`),
      "countingMs",
    );
    const written = Object.keys(after).filter((k) => after[k] !== before[k]);
    if (written.length) problems.push(`refused with ${answer.status} but wrote ${written.join(", ")}`);
  }
  if (problems.length) {
    throw new Error(
      // The body too: the shape names only what was done to it, not the generated values around that.
      `${request.shape}\n  body ${request.body?.slice(0, 300) ?? "(none)"}\n  -> ${answer.status} ${answer.text.slice(0, 300)}\n  ${problems.join("\n  ")}`,
    );
  }
}

describe("fuzzing the API and tracking workers from their OpenAPI document", () => {
  it(
    `holds its properties over ${runs} generated requests, spread over every documented /api operation`,
    async () => {
      expect(operations.length).toBeGreaterThan(30);
      const perOperation = Math.ceil(runs / operations.length);
      console.log(`fuzzing: FUZZ_RUNS=${runs} FUZZ_SEED=${seed} (${perOperation} per operation)`);
      const failures: string[] = [];
      for (const operation of operations) {
        const startedAt = Date.now();
        spent.answeringMs = 0;
        spent.countingMs = 0;
        const arbitrary = requestArbitrary(document, [operation], target.known, target.credentials);
        const result = await fc.check(fc.asyncProperty(arbitrary, holds), {
          numRuns: perOperation,
          seed,
          endOnFailure: true,
        });
        // A long run shows where its time goes, one line per operation.
        if (runs > 400) {
          console.log(
            `fuzzed ${operation.method} ${operation.path} in ${Date.now() - startedAt} ms ` +
              `(answering ${spent.answeringMs} ms, counting rows ${spent.countingMs} ms)`,
          );
        }
        if (result.failed) {
          failures.push(`seed ${result.seed}: ${String(result.errorInstance).replace(/^Error: /, "")}`);
        }
      }
      expect(failures).toEqual([]);
    },
    budgetMs,
  );
});
