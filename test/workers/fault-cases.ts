import { expect } from "vitest";
import type { FaultSpec } from "../../dev/sql-faults.ts";
import type { FaultSwitchClient } from "./fault-switch.ts";

/** The kinds of failure each fault test injects at each round trip. */
export const FAULT_KINDS: Record<string, FaultSpec> = {
  "transient error": { mode: "error", code: "08006" },
  "constraint error": { mode: "error", code: "23514", message: "injected check violation" },
  timeout: { mode: "timeout", delayMs: 50 },
  "lost answer": { mode: "lost" },
};

/** Every kind at every round trip of an operation that makes `roundTrips` of them: `[kind, ordinal, fault]`. */
export function faultCases(roundTrips: number): Array<[string, number, FaultSpec]> {
  const cases: Array<[string, number, FaultSpec]> = [];
  for (let ordinal = 1; ordinal <= roundTrips; ordinal++) {
    for (const [name, fault] of Object.entries(FAULT_KINDS)) cases.push([name, ordinal, fault]);
  }
  return cases;
}

/** Runs `action` with `fault` armed at round trip `ordinal`, and checks that the fault fired exactly once. */
export async function withFault<T>(
  faults: FaultSwitchClient,
  fault: FaultSpec,
  ordinal: number,
  action: () => Promise<T>,
): Promise<T> {
  await faults.arm({ ...fault, ordinal });
  try {
    return await action();
  } finally {
    expect((await faults.clear()).fired, "the fault fired").toBe(1);
  }
}
