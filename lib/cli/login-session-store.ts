import { and, eq, gt } from "drizzle-orm";
import { cliLoginSessionIdTokenUniqueIndex, cliLoginSessions } from "../../schema/cli-login.ts";
import type { Database } from "../db/client.ts";
import { isUniqueViolation } from "../db/errors.ts";
import type { PersonRefusal } from "../identity/identity-errors.ts";

export interface LoginSessionRow {
  id: number;
  status: string;
  expiresAt: Date;
  userCode: string;
}

/** The login session a state belongs to (looked up by the state's hash; the state itself is never stored). */
export async function readLoginSession(
  db: Database,
  stateHash: string,
): Promise<LoginSessionRow | undefined> {
  const [session] = await db
    .select({
      id: cliLoginSessions.id,
      status: cliLoginSessions.status,
      expiresAt: cliLoginSessions.expiresAt,
      userCode: cliLoginSessions.userCode,
    })
    .from(cliLoginSessions)
    .where(eq(cliLoginSessions.stateHash, stateHash));
  return session;
}

/**
 * Records why a sign-in for a pending, unexpired session was refused, so that its poll can say so
 * (`decide-poll.ts`). The session stays pending: a later sign-in that is accepted still completes it.
 */
export async function markLoginRefused(
  db: Database,
  sessionId: number,
  refusal: PersonRefusal,
  now: Date,
): Promise<void> {
  await db
    .update(cliLoginSessions)
    .set({ refusal })
    .where(
      and(
        eq(cliLoginSessions.id, sessionId),
        eq(cliLoginSessions.status, "pending"),
        gt(cliLoginSessions.expiresAt, now),
      ),
    );
}

/**
 * Binds a pending, unexpired session to the person who signed in, in one guarded update
 * (pending -> completed, any earlier refusal cleared): of two racing completions only one is `completed`.
 * `idTokenHash`: the ID token `auth/callback` was given, which completes no other session (`id_token_used`).
 */
export async function markLoginCompleted(
  db: Database,
  sessionId: number,
  userId: number,
  now: Date,
  idTokenHash: string | null = null,
): Promise<"completed" | "not_open" | "id_token_used"> {
  try {
    const bound = await db
      .update(cliLoginSessions)
      .set({ status: "completed", userId, completedAt: now, refusal: null, idTokenHash })
      .where(
        and(
          eq(cliLoginSessions.id, sessionId),
          eq(cliLoginSessions.status, "pending"),
          gt(cliLoginSessions.expiresAt, now),
        ),
      )
      .returning({ id: cliLoginSessions.id });
    return bound.length > 0 ? "completed" : "not_open";
  } catch (error) {
    if (isUniqueViolation(error, cliLoginSessionIdTokenUniqueIndex)) return "id_token_used";
    throw error;
  }
}
