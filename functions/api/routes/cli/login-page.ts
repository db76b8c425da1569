import type { OpenAPIHono } from "@hono/zod-openapi";
import { badRequest } from "../../../../lib/errors/api-error.ts";
import type { AppEnv } from "../../../../lib/http/app-env.ts";
import { errorPolicy } from "../../../../lib/http/dependencies.ts";
import { rateLimit } from "../../../../lib/http/rate-limit.ts";
import { rateLimits } from "../../../../lib/ratelimit/policies.ts";

/** Carries a command-line login's state through the dashboard sign-in; lives as long as the login session. */
export const CLI_LOGIN_COOKIE = "__Host-affiliate_cli_login";
const CLI_LOGIN_COOKIE_SECONDS = 300;
export const CLI_LOGIN_PATH = "/cli/login";
export const LOGIN_STATE_INVALID_MESSAGE = "state is required and must be a login state";

/** A login state is 256 random bits in base64url (no padding): 43 characters. */
const LOGIN_STATE = /^[A-Za-z0-9_-]{43}$/;

export function cliLoginCookie(state: string, maxAge: number): string {
  return `${CLI_LOGIN_COOKIE}=${state}; Path=/; HttpOnly; Secure; SameSite=Lax; Max-Age=${maxAge}`;
}

/**
 * The page `auth/start`'s `verification_url` points to (`/cli/login?state=...&code=...`). It remembers the
 * login state in a short-lived cookie and hands the browser to the dashboard sign-in; the sign-in callback
 * then completes the command-line login for the person who signed in (see `routes/auth/sign-in.ts`). An HTML
 * page, not part of the JSON API, so it is not in the OpenAPI document.
 */
export function registerCliLoginPage(app: OpenAPIHono<AppEnv>): void {
  app.use(CLI_LOGIN_PATH, errorPolicy("Sign-in failed"), rateLimit(rateLimits.signIn));
  app.get(CLI_LOGIN_PATH, (c) => {
    const state = c.req.query("state");
    if (!state || !LOGIN_STATE.test(state)) throw badRequest(LOGIN_STATE_INVALID_MESSAGE);
    c.header("Set-Cookie", cliLoginCookie(state, CLI_LOGIN_COOKIE_SECONDS));
    c.header("Cache-Control", "no-store");
    return c.redirect("/api/v1/auth/sign-in", 302);
  });
}
