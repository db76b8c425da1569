/** The Postgres error behind a driver or drizzle error (drizzle wraps single-query failures in `cause`). */
export interface PgError {
  code?: string;
  constraint?: string;
  message: string;
}

export function pgErrorOf(error: unknown): PgError | undefined {
  let current: unknown = error;
  for (let depth = 0; depth < 5 && current; depth++) {
    if (
      typeof current === "object" &&
      current !== null &&
      typeof (current as { code?: unknown }).code === "string"
    ) {
      return current as PgError;
    }
    current = (current as { cause?: unknown }).cause;
  }
  return undefined;
}

export function isUniqueViolation(error: unknown, constraint?: string): boolean {
  const pg = pgErrorOf(error);
  return pg?.code === "23505" && (constraint === undefined || pg.constraint === constraint);
}

/**
 * An error Postgres raised about the statements themselves (a constraint, a check, a trigger), as opposed
 * to a transient one (no connection, serialization failure, resources, shutdown), which a retry may cure.
 */
export function isDeterministicDatabaseError(error: unknown): boolean {
  const code = pgErrorOf(error)?.code;
  if (code?.length !== 5) return false;
  return !["08", "40", "53", "57", "58", "XX"].includes(code.slice(0, 2));
}

/** A `guard(...)` in a write batch found the state changed since it was read. */
export function isGuardFailure(error: unknown): boolean {
  const pg = pgErrorOf(error);
  return pg?.code === "P0001" && pg.message.startsWith("guard failed");
}

const ROLLED_BACK_FOR_ANOTHER = new Set(["40P01", "40001"]);

/**
 * A SQLSTATE with which PostgreSQL rolled a transaction (or a write batch's item) back because of another: a
 * deadlock it broke (`40P01`) or a serialization failure (`40001`). Nothing of it was kept, so it may run again.
 */
export function isRolledBackForAnother(code: string | undefined): boolean {
  return code !== undefined && ROLLED_BACK_FOR_ANOTHER.has(code);
}

/**
 * The database answered and kept nothing of the write: it refused it (a value refused, a guard or a unique index
 * that found the state changed) or rolled it back for another. Not a lost answer or an unreachable database,
 * after which the write may have committed. A request whose write the database decided at once (the sale's,
 * the refund's, the lead's) is then read, decided and written the usual way.
 */
export function isRefusedAndKeptNothing(error: unknown): boolean {
  return isDeterministicDatabaseError(error) || isRolledBackForAnother(pgErrorOf(error)?.code);
}

/**
 * Read-decide-write with optimistic concurrency: re-runs the whole attempt when its write batch hit a
 * guard or one of the named unique constraints (a concurrent request got there first), or was rolled back to
 * end a deadlock or a serialization failure (two writers that waited on each other: a sale and a provider
 * event sharing a customer and an id, say), a bounded number of times, with a short jittered pause. The next
 * read sees the winner's state and decides accordingly.
 */
export async function withConflictRetry<T>(
  attempt: () => Promise<T>,
  options: { retryOnConstraints?: readonly string[]; attempts?: number } = {},
): Promise<T> {
  const attempts = options.attempts ?? 8;
  for (let i = 1; ; i++) {
    try {
      return await attempt();
    } catch (error) {
      const pg = pgErrorOf(error);
      const retriable =
        isGuardFailure(error) ||
        isRolledBackForAnother(pg?.code) ||
        (pg?.code === "23505" &&
          pg.constraint !== undefined &&
          options.retryOnConstraints?.includes(pg.constraint));
      if (!retriable || i >= attempts) throw error;
      // Jittered backoff so contenders that collided do not collide again in lockstep.
      await new Promise((resolve) => setTimeout(resolve, Math.random() * 10 * i));
    }
  }
}
