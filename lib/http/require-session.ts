import { createMiddleware } from "hono/factory";
import { sha256Hex } from "../auth/api-keys.ts";
import { requestCredential } from "../auth/request-credential.ts";
import { touchSession } from "../auth/session-store.ts";
import { cookieValue, isProgramApiKey, SESSION_COOKIE } from "../auth/sign-in-tokens.ts";
import { platformError } from "../errors/api-error.ts";
import { personRefusalError } from "../identity/identity-errors.ts";
import type { AppEnv } from "./app-env.ts";

export const SIGN_IN_REQUIRED = "Sign-in required";
export const INVALID_SIGN_IN_TOKEN = "Invalid or expired sign-in token";
export const PROGRAM_KEY_REFUSED =
  "A program API key is not accepted here. Sign in to the dashboard and use its sign-in token.";
export const CROSS_SITE_REFUSED = "Cross-site request refused";

/** The signed-in person of a request, set by `requireSession`. */
export interface Session {
  userId: number;
  tokenId: number;
  /** How the token came: a cookie-authenticated write had its Origin checked. */
  via: "cookie" | "bearer";
}

const safeMethods = new Set(["GET", "HEAD", "OPTIONS"]);

/**
 * Dashboard, settings and (later) dashboard API routes: the dashboard sign-in token from
 * `Authorization: Bearer` (API callers) or the `__Host-` cookie (the page). A program API key is refused
 * with its own message. A cookie-authenticated write must come from this service's own origin (Origin
 * header), so another site cannot make a signed-in browser change settings. Blocked accounts are refused
 * here too, with the spec's message. Sets `session` and, for the rate limiter, `authenticatedKeyHash`.
 */
export const requireSession = createMiddleware<AppEnv>(async (c, next) => {
  // The Bearer header is parsed and hashed once per request (the rate limiter, before, already did).
  const { header, keyHash } = await requestCredential(c);
  const cookie = cookieValue(c.req.header("Cookie"), SESSION_COOKIE);
  let token: string;
  let via: Session["via"];
  if (header.kind === "token") {
    token = header.token;
    via = "bearer";
  } else if (header.kind === "absent" && cookie) {
    token = cookie;
    via = "cookie";
  } else if (header.kind === "absent") {
    throw platformError(401, SIGN_IN_REQUIRED);
  } else {
    throw platformError(401, INVALID_SIGN_IN_TOKEN);
  }
  if (isProgramApiKey(token)) throw platformError(401, PROGRAM_KEY_REFUSED);
  if (via === "cookie" && !safeMethods.has(c.req.method)) {
    const origin = c.req.header("Origin");
    if (!origin || origin !== new URL(c.req.url).origin) throw platformError(403, CROSS_SITE_REFUSED);
  }
  const tokenHash = via === "bearer" && keyHash !== null ? keyHash : await sha256Hex(token);
  const { db, clock } = c.get("deps");
  const session = await touchSession(db, tokenHash, clock.now());
  if (!session) throw platformError(401, INVALID_SIGN_IN_TOKEN);
  if (session.blocked) throw personRefusalError("account_blocked");
  c.set("session", { userId: session.userId, tokenId: session.tokenId, via });
  c.set("authenticatedKeyHash", tokenHash);
  await next();
});
