/**
 * Whether a run's slow requests were slow one at a time or all at once.
 *
 * The p99 target asks every request to finish within 3x the median. A request can miss it for its own
 * reasons (a slow statement, a conflict retry), or because the whole worker stopped for a while and every
 * request in flight waited together. The second kind is the runtime's, not the route's: in workerd, a garbage
 * collection destroys the native objects (requests, responses, headers, streams) of every request since the
 * last one, and the isolate's one thread runs nothing else meanwhile (README, Benchmarks, "Where the p99
 * comes from"). The two kinds look alike in a percentile; they differ in time: the requests a pause held
 * finish together when it ends.
 *
 * So each response is recorded with the moment it ended, and the slow ones (above 3x the run's median) are
 * grouped by that moment. A group holding at least half the connections is a stall.
 */

/** Slow responses ending at most this far apart belong to one group. */
export const STALL_GAP_MS = 5;

export interface TimedResponse {
  /** When the response ended (ms, any monotonic clock). */
  endedAtMs: number;
  latencyMs: number;
}

export interface StallSummary {
  /** 3x the median latency: the p99 target's bound. */
  boundMs: number;
  /** Responses above the bound. */
  slow: number;
  /** Of those, the ones that ended in a stall. */
  slowInStalls: number;
  stalls: number;
  /** The highest latency of a response that ended in a stall (0 without stalls). */
  longestStallMs: number;
}

/** Collects one run's responses (autocannon's `response` event gives each one's latency when it ends). */
export class ResponseLog {
  private readonly responses: TimedResponse[] = [];

  record(latencyMs: number, endedAtMs = performance.now()): void {
    this.responses.push({ endedAtMs, latencyMs });
  }

  summary(connections: number): StallSummary {
    return summariseStalls(this.responses, connections);
  }
}

/**
 * Groups the responses above 3x the median latency by when they ended (a gap of more than `STALL_GAP_MS`
 * starts a new group) and counts as a stall every group of at least half the connections: that many requests
 * held up at once means the worker stopped, not one request.
 */
export function summariseStalls(responses: readonly TimedResponse[], connections: number): StallSummary {
  const latencies = responses.map((r) => r.latencyMs).sort((a, b) => a - b);
  const median = latencies[Math.floor((latencies.length - 1) / 2)] ?? 0;
  const boundMs = 3 * median;
  const slow = responses.filter((r) => r.latencyMs > boundMs).sort((a, b) => a.endedAtMs - b.endedAtMs);
  const groups: TimedResponse[][] = [];
  for (const response of slow) {
    const group = groups.at(-1);
    const last = group?.at(-1);
    if (group && last && response.endedAtMs - last.endedAtMs <= STALL_GAP_MS) group.push(response);
    else groups.push([response]);
  }
  const stalls = groups.filter((group) => group.length >= Math.max(2, connections / 2));
  return {
    boundMs,
    slow: slow.length,
    slowInStalls: stalls.reduce((sum, group) => sum + group.length, 0),
    stalls: stalls.length,
    longestStallMs: stalls.flat().reduce((longest, r) => Math.max(longest, r.latencyMs), 0),
  };
}
