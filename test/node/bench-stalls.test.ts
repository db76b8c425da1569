import { describe, expect, it } from "vitest";
import { STALL_GAP_MS, summariseStalls, type TimedResponse } from "../../bench/stalls.ts";

/** `count` responses of `latencyMs` each, ending 0.1 ms apart from `endedAtMs` on. */
function burst(count: number, latencyMs: number, endedAtMs: number): TimedResponse[] {
  return Array.from({ length: count }, (_, i) => ({ latencyMs, endedAtMs: endedAtMs + i * 0.1 }));
}

/** Steady responses at `latencyMs`, one every millisecond over `fromMs` to `toMs`. */
function steady(latencyMs: number, fromMs: number, toMs: number): TimedResponse[] {
  return Array.from({ length: toMs - fromMs }, (_, i) => ({ latencyMs, endedAtMs: fromMs + i }));
}

describe("summariseStalls (bench/stalls.ts)", () => {
  it("counts the slow responses that ended together with half the connections or more as one stall", () => {
    const responses = [...steady(2, 0, 1000), ...burst(10, 80, 500), ...burst(5, 40, 800)];
    expect(summariseStalls(responses, 10)).toEqual({
      boundMs: 6,
      slow: 15,
      slowInStalls: 15,
      stalls: 2,
      longestStallMs: 80,
    });
  });

  it("leaves slow responses that end apart, or too few together, out of the stalls", () => {
    const alone = [0, 1, 2].map((i) => ({ latencyMs: 30, endedAtMs: 100 + i * (STALL_GAP_MS + 1) }));
    const responses = [...steady(2, 0, 1000), ...alone, ...burst(4, 50, 600)];
    expect(summariseStalls(responses, 10)).toEqual({
      boundMs: 6,
      slow: 7,
      slowInStalls: 0,
      stalls: 0,
      longestStallMs: 0,
    });
  });

  it("chains responses ending within the gap of the previous one into one stall", () => {
    const chained = Array.from({ length: 6 }, (_, i) => ({
      latencyMs: 20 + i,
      endedAtMs: 300 + i * STALL_GAP_MS,
    }));
    const summary = summariseStalls([...steady(3, 0, 500), ...chained], 10);
    expect(summary).toMatchObject({ slow: 6, slowInStalls: 6, stalls: 1, longestStallMs: 25 });
  });

  it("bounds at 3x the median and counts nothing above it when nothing is", () => {
    expect(summariseStalls(steady(4, 0, 100), 10)).toEqual({
      boundMs: 12,
      slow: 0,
      slowInStalls: 0,
      stalls: 0,
      longestStallMs: 0,
    });
    expect(summariseStalls([], 10)).toMatchObject({ boundMs: 0, slow: 0, stalls: 0 });
  });
});
