import { cliLoginSessions } from "../../schema/cli-login.ts";
import type { Clock } from "../clock.ts";
import type { Database } from "../db/client.ts";
import { loginSessionLifetimeMs, newLoginState, pollIntervalSeconds, userCodeOf } from "./credentials.ts";

export interface StartedLogin {
  state: string;
  user_code: string;
  verification_url: string;
  poll_interval_seconds: number;
  expires_at: string;
}

/**
 * `auth/start`: a pending session that expires in 5 minutes, and what the tool shows the person: the URL of
 * the sign-in page carrying the state, and the short code that page repeats. One round trip (one insert).
 */
export async function startLogin(db: Database, clock: Clock, signInPageUrl: string): Promise<StartedLogin> {
  const state = await newLoginState();
  const userCode = userCodeOf(state.hash);
  const expiresAt = new Date(clock.now().getTime() + loginSessionLifetimeMs);
  await db.insert(cliLoginSessions).values({ stateHash: state.hash, userCode, expiresAt });
  const url = new URL(signInPageUrl);
  url.searchParams.set("state", state.value);
  url.searchParams.set("code", userCode);
  return {
    state: state.value,
    user_code: userCode,
    verification_url: url.toString(),
    poll_interval_seconds: pollIntervalSeconds,
    expires_at: expiresAt.toISOString(),
  };
}
