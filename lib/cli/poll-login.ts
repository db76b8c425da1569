import { and, eq } from "drizzle-orm";
import { cliLoginSessions, cliLoginTokenSessionUniqueIndex, cliLoginTokens } from "../../schema/cli-login.ts";
import { users } from "../../schema/workspaces.ts";
import { sha256Hex } from "../auth/api-keys.ts";
import type { Clock } from "../clock.ts";
import type { Database } from "../db/client.ts";
import { isUniqueViolation } from "../db/errors.ts";
import type { PersonRefusal } from "../identity/identity-errors.ts";
import { loginTokenLifetimeMs, newLoginToken } from "./credentials.ts";
import { decidePoll } from "./decide-poll.ts";

export type PollResult =
  | { outcome: "refused"; reason: "session_not_found" | "session_consumed" | PersonRefusal }
  | { outcome: "pending" | "expired" }
  | { outcome: "signed_in"; token: string; expiresAt: Date; email: string };

/**
 * `auth/poll`: read the session (one round trip), decide, and on the first poll after sign-in issue the
 * login token in one transaction that also marks the session consumed. Two polls racing for the token: the
 * unique session id of the token row lets exactly one win; the other is answered `Session already consumed`.
 */
export async function pollLogin(db: Database, clock: Clock, state: string): Promise<PollResult> {
  const now = clock.now();
  const stateHash = await sha256Hex(state);
  const [row] = await db
    .select({
      id: cliLoginSessions.id,
      status: cliLoginSessions.status,
      userId: cliLoginSessions.userId,
      expiresAt: cliLoginSessions.expiresAt,
      refusal: cliLoginSessions.refusal,
      email: users.email,
    })
    .from(cliLoginSessions)
    .leftJoin(users, eq(users.id, cliLoginSessions.userId))
    .where(eq(cliLoginSessions.stateHash, stateHash));
  const decision = decidePoll(row ?? null, now);
  if (decision.outcome === "refused") return decision;
  if (decision.outcome === "waiting") return { outcome: decision.status };

  const token = await newLoginToken();
  const expiresAt = new Date(now.getTime() + loginTokenLifetimeMs);
  try {
    await db.batch([
      db
        .update(cliLoginSessions)
        .set({ status: "consumed", consumedAt: now })
        .where(and(eq(cliLoginSessions.id, decision.sessionId), eq(cliLoginSessions.status, "completed"))),
      db.insert(cliLoginTokens).values({
        userId: decision.userId,
        tokenHash: token.hash,
        tokenPrefix: token.prefix,
        sessionId: decision.sessionId,
        expiresAt,
      }),
    ]);
  } catch (error) {
    // Another poll issued this session's token between our read and write: one token per session.
    if (isUniqueViolation(error, cliLoginTokenSessionUniqueIndex)) {
      return { outcome: "refused", reason: "session_consumed" };
    }
    throw error;
  }
  return { outcome: "signed_in", token: token.value, expiresAt, email: row?.email ?? "" };
}
