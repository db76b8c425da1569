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
 * the sign-in page, and the short code that page asks them to approve. The URL carries a secret of its own,
 * not the state: the state is what the tool polls with, and a link is seen by more than the tool (a screen
 * share, the browser's history). One round trip (one insert).
 */
export async function startLogin(db: Database, clock: Clock, signInPageUrl: string): Promise<StartedLogin> {
  const state = await newLoginState();
  const browser = await newLoginState();
  const userCode = userCodeOf(state.hash);
  const expiresAt = new Date(clock.now().getTime() + loginSessionLifetimeMs);
  await db
    .insert(cliLoginSessions)
    .values({ stateHash: state.hash, browserHash: browser.hash, userCode, expiresAt });
  const url = new URL(signInPageUrl);
  url.searchParams.set("login", browser.value);
  url.searchParams.set("code", userCode);
  return {
    state: state.value,
    user_code: userCode,
    verification_url: url.toString(),
    poll_interval_seconds: pollIntervalSeconds,
    expires_at: expiresAt.toISOString(),
  };
}
