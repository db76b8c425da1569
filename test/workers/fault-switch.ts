import { afterAll, beforeAll, inject } from "vitest";
import type { FaultSpec, FaultState } from "../../dev/sql-faults.ts";
import { neonConfig } from "../../lib/db/sql-over-http.ts";

export interface FaultSwitchClient {
  /** Arms `fault` for this file's round trips only (counted from now, once earlier work has settled). */
  arm(fault: FaultSpec): Promise<void>;
  /** Disarms and tells how many round trips were seen and failed since arming. */
  clear(): Promise<FaultState>;
  /** The driver's round trips `action` makes (this isolate's: the worker under test and the test's own). */
  roundTripsOf(action: () => Promise<unknown>): Promise<number>;
}

/**
 * The SQL endpoint's fault switch (dev/sql-faults.ts), for one test file. The worker under test runs in the
 * test's isolate with the same driver module, so the driver's fetch, wrapped here, tags every round trip
 * with this file's scope: a fault armed here fails only this file's round trips, whatever runs in parallel.
 * Arming goes over HTTP with the endpoint's per-run secret, as the driver's statements do. Call once at the
 * top of a test file.
 */
export function useFaultSwitch(): FaultSwitchClient {
  const scope = `faults-${crypto.randomUUID()}`;
  const endpoint = new URL(inject("sqlEndpointUrl"));
  const secret = inject("sqlConnectionString");
  let roundTrips = 0;
  const previousFetch = neonConfig.fetchFunction;
  beforeAll(() => {
    neonConfig.fetchFunction = (input: RequestInfo | URL, init?: RequestInit) => {
      roundTrips++;
      const headers = new Headers(init?.headers);
      headers.set("X-Fault-Scope", scope);
      return fetch(input, { ...init, headers });
    };
  });
  afterAll(async () => {
    neonConfig.fetchFunction = previousFetch;
    await admin("clear");
  });

  async function admin(action: "arm" | "clear", fault?: FaultSpec): Promise<FaultState> {
    const response = await fetch(new URL(`/faults/${action}`, endpoint), {
      method: "POST",
      headers: { "Content-Type": "application/json", "Neon-Connection-String": secret },
      body: JSON.stringify({ scope, fault }),
    });
    if (response.status !== 200)
      throw new Error(`fault switch ${action}: ${response.status} ${await response.text()}`);
    return (await response.json()) as FaultState;
  }

  /**
   * Waits until this isolate has made no round trip for a while: work an earlier request left running (a
   * queue consumer, a `waitUntil`) must not take the ordinal a fault is armed for.
   */
  async function quiescence(): Promise<void> {
    const deadline = Date.now() + 5_000;
    let seen = -1;
    while (seen !== roundTrips && Date.now() < deadline) {
      seen = roundTrips;
      await new Promise((resolve) => setTimeout(resolve, 150));
    }
  }

  return {
    arm: async (fault) => {
      await quiescence();
      await admin("arm", fault);
    },
    clear: () => admin("clear"),
    roundTripsOf: async (action) => {
      const before = roundTrips;
      await action();
      return roundTrips - before;
    },
  };
}
