import type { CliLoginStatus } from "../../schema/cli-login.ts";
import type { PersonRefusal } from "../identity/identity-errors.ts";

export interface PolledSession {
  id: number;
  status: CliLoginStatus;
  userId: number | null;
  expiresAt: Date;
  /** Why a sign-in for it was refused (the session is then over). */
  refusal: PersonRefusal | null;
}

export type PollDecision =
  | { outcome: "refused"; reason: "session_not_found" | "session_consumed" | PersonRefusal }
  | { outcome: "waiting"; status: "pending" | "expired" }
  | { outcome: "issue_token"; sessionId: number; userId: number };

/**
 * The poll rules (spec section 4): the token is handed out on the first poll after sign-in and never again;
 * an unknown state is refused; a session older than 5 minutes that was not signed in answers `expired`. A
 * completed session whose 5 minutes ran out before its first poll is expired too: the token is not issued
 * late, so a state seen over someone's shoulder is worth nothing after 5 minutes. A session whose sign-in
 * was refused (a suspended account, an unverified provider email) answers that refusal until it expires, so
 * the tool stops waiting and says why instead of waiting out the 5 minutes.
 */
export function decidePoll(session: PolledSession | null, now: Date): PollDecision {
  if (!session) return { outcome: "refused", reason: "session_not_found" };
  if (session.status === "consumed") return { outcome: "refused", reason: "session_consumed" };
  if (session.expiresAt.getTime() <= now.getTime()) return { outcome: "waiting", status: "expired" };
  if (session.status === "pending" && session.refusal) return { outcome: "refused", reason: session.refusal };
  if (session.status === "pending" || session.userId === null)
    return { outcome: "waiting", status: "pending" };
  return { outcome: "issue_token", sessionId: session.id, userId: session.userId };
}
