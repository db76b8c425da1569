import { and, eq, gt, isNull } from "drizzle-orm";
import { cliLoginSessionIdTokenUniqueIndex, cliLoginSessions } from "../../schema/cli-login.ts";
import type { Database } from "../db/client.ts";
import { isUniqueViolation } from "../db/errors.ts";
import type { PersonRefusal } from "../identity/identity-errors.ts";

export interface LoginSessionRow {
  id: number;
  status: string;
  expiresAt: Date;
  userCode: string;
  /** A sign-in for it was refused: the session is over. */
  refused: boolean;
}

/**
 * The login session a state belongs to, or (`by: "browser"`) the one a sign-in link's secret belongs to,
 * looked up by the secret's hash (neither secret is stored).
 */
export async function readLoginSession(
  db: Database,
  secretHash: string,
  by: "state" | "browser" = "state",
): Promise<LoginSessionRow | undefined> {
  const [session] = await db
    .select({
      id: cliLoginSessions.id,
      status: cliLoginSessions.status,
      expiresAt: cliLoginSessions.expiresAt,
      userCode: cliLoginSessions.userCode,
      refusal: cliLoginSessions.refusal,
    })
    .from(cliLoginSessions)
    .where(eq(by === "state" ? cliLoginSessions.stateHash : cliLoginSessions.browserHash, secretHash));
  if (!session) return undefined;
  const { refusal, ...row } = session;
  return { ...row, refused: refusal !== null };
}

/**
 * Ends a pending, unexpired session refused, recording why a sign-in for it was refused, so that its poll can
 * say so (`decide-poll.ts`); no sign-in completes it afterwards. Whether it was open (and is now refused).
 */
export async function markLoginRefused(
  db: Database,
  sessionId: number,
  refusal: PersonRefusal,
  now: Date,
): Promise<boolean> {
  const refused = await db
    .update(cliLoginSessions)
    .set({ refusal })
    .where(
      and(
        eq(cliLoginSessions.id, sessionId),
        eq(cliLoginSessions.status, "pending"),
        isNull(cliLoginSessions.refusal),
        gt(cliLoginSessions.expiresAt, now),
      ),
    )
    .returning({ id: cliLoginSessions.id });
  return refused.length > 0;
}

/**
 * Binds a pending, unrefused, unexpired session to the person who signed in, in one guarded update
 * (pending -> completed): of two racing completions, or a completion and a refusal, only one wins.
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
      .set({ status: "completed", userId, completedAt: now, idTokenHash })
      .where(
        and(
          eq(cliLoginSessions.id, sessionId),
          eq(cliLoginSessions.status, "pending"),
          isNull(cliLoginSessions.refusal),
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
