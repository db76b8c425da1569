import type { Context } from "hono";
import { sha256Hex } from "../../../../lib/auth/api-keys.ts";
import { touchSession } from "../../../../lib/auth/session-store.ts";
import { cookieValue, isProgramApiKey, SESSION_COOKIE } from "../../../../lib/auth/sign-in-tokens.ts";
import type { AppEnv } from "../../../../lib/http/app-env.ts";

export type PageSession =
  | { kind: "signed_in"; userId: number }
  /** No cookie, or an unknown, expired or revoked token: the page sends the browser to sign in. */
  | { kind: "signed_out" }
  | { kind: "blocked" };

/**
 * The page's sign-in: only the `__Host-` session cookie the sign-in sets (a browser navigating here sends
 * no Authorization header), checked and slid like `requireSession` does for the JSON routes. A program
 * API key in the cookie is no sign-in.
 */
export async function pageSession(c: Context<AppEnv>): Promise<PageSession> {
  const token = cookieValue(c.req.header("Cookie"), SESSION_COOKIE);
  if (!token || isProgramApiKey(token)) return { kind: "signed_out" };
  const { db, clock } = c.get("deps");
  const tokenHash = await sha256Hex(token);
  const session = await touchSession(db, tokenHash, clock.now());
  if (!session) return { kind: "signed_out" };
  // A real sign-in: the limiter counts it in its own bucket only from now on.
  c.set("authenticatedKeyHash", tokenHash);
  if (session.blocked) return { kind: "blocked" };
  return { kind: "signed_in", userId: session.userId };
}
