import type { Clock } from "../clock.ts";
import type { Database } from "../db/client.ts";
import { decideReadiness, type ReadinessVerdict } from "./decide-readiness.ts";
import { type ReadinessRead, type ReadinessSubject, readReadinessFacts } from "./readiness-store.ts";

export type { ReadinessSubject } from "./readiness-store.ts";

/**
 * The readiness use case: one read round trip, then the pure verdict. `subject` is the program itself (the
 * command-line status route, which authenticated on its own) or the key hash of the request, in which case
 * the key's record comes back from the same round trip for the caller to judge.
 */
export async function readReadiness(
  db: Database,
  subject: ReadinessSubject,
  clock: Clock,
): Promise<{ key: ReadinessRead["key"]; verdict: ReadinessVerdict | null }> {
  const now = clock.now();
  const read = await readReadinessFacts(db, subject, now);
  return { key: read.key, verdict: read.facts ? decideReadiness(read.facts, now) : null };
}
