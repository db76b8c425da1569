import { afterAll, beforeAll } from "vitest";
import { neonConfig } from "../../lib/db/sql-over-http.ts";

/**
 * Counts the database driver's HTTP round trips (DESIGN.md section 2 budget). The worker runs in the test
 * isolate with the same driver module, so wrapping its fetch sees every round trip a request makes.
 * Call once at the top of a test file.
 */
export function countDatabaseRoundTrips(): (action: () => Promise<unknown>) => Promise<number> {
  let roundTrips = 0;
  const previousFetch = neonConfig.fetchFunction;
  beforeAll(() => {
    neonConfig.fetchFunction = (input: RequestInfo | URL, init?: RequestInit) => {
      roundTrips++;
      return fetch(input, init);
    };
  });
  afterAll(() => {
    neonConfig.fetchFunction = previousFetch;
  });
  return async (action) => {
    const before = roundTrips;
    await action();
    return roundTrips - before;
  };
}
