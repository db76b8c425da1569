import type { OpenAPIHono } from "@hono/zod-openapi";
import { cookieValue } from "../../../../lib/auth/sign-in-tokens.ts";
import { completeLoginForPerson } from "../../../../lib/cli/complete-login.ts";
import { loginResultPage } from "../../../../lib/cli/login-result-page.ts";
import { badRequest } from "../../../../lib/errors/api-error.ts";
import type { AppEnv } from "../../../../lib/http/app-env.ts";
import { errorPolicy } from "../../../../lib/http/dependencies.ts";
import { rateLimit } from "../../../../lib/http/rate-limit.ts";
import { requireSession } from "../../../../lib/http/require-session.ts";
import { rateLimits } from "../../../../lib/ratelimit/policies.ts";

/** Carries a command-line login's link secret through the dashboard sign-in; lives as long as the session. */
export const CLI_LOGIN_COOKIE = "__Host-affiliate_cli_login";
const CLI_LOGIN_COOKIE_SECONDS = 300;
export const CLI_LOGIN_PATH = "/cli/login";
export const CLI_LOGIN_APPROVE_PATH = "/cli/login/approve";
export const LOGIN_LINK_INVALID_MESSAGE = "login is required and must be a login link's secret";

/** The login pages are never framed: an approval must be a click the person meant, on our own page. */
export const LOGIN_PAGE_POLICY = "frame-ancestors 'none'";

/** A link's secret is 256 random bits in base64url (no padding): 43 characters. */
const LOGIN_LINK_SECRET = /^[A-Za-z0-9_-]{43}$/;

export function cliLoginCookie(secret: string, maxAge: number): string {
  return `${CLI_LOGIN_COOKIE}=${secret}; Path=/; HttpOnly; Secure; SameSite=Lax; Max-Age=${maxAge}`;
}

/**
 * The page `auth/start`'s `verification_url` points to (`/cli/login?login=...&code=...`). It remembers the
 * link's secret in a short-lived cookie and hands the browser to the dashboard sign-in; the sign-in callback
 * then asks the person to approve the code their terminal shows (see `routes/auth/sign-in.ts`), and the
 * approval (`POST /cli/login/approve`) completes the command-line login for them. HTML pages, not part of the
 * JSON API, so they are not in the OpenAPI document.
 */
export function registerCliLoginPage(app: OpenAPIHono<AppEnv>): void {
  app.use(CLI_LOGIN_PATH, errorPolicy("Sign-in failed"), rateLimit(rateLimits.signIn));
  app.get(CLI_LOGIN_PATH, (c) => {
    const secret = c.req.query("login");
    if (!secret || !LOGIN_LINK_SECRET.test(secret)) throw badRequest(LOGIN_LINK_INVALID_MESSAGE);
    c.header("Set-Cookie", cliLoginCookie(secret, CLI_LOGIN_COOKIE_SECONDS));
    c.header("Cache-Control", "no-store");
    return c.redirect("/api/v1/auth/sign-in?for=cli", 302);
  });

  // The person approves with the dashboard sign-in the callback just gave their browser (its cookie, whose
  // write `requireSession` takes only from this service's own Origin) and the link's cookie: both SameSite=Lax,
  // so another site's form cannot approve for them. The form sends the code the page showed: another site can
  // still replace the link's cookie (a navigation to its own link) while the page is open, and the approval
  // must then bind nothing rather than the login the cookie names now.
  app.use(
    CLI_LOGIN_APPROVE_PATH,
    errorPolicy("Sign-in failed"),
    rateLimit(rateLimits.signIn),
    requireSession,
  );
  app.post(CLI_LOGIN_APPROVE_PATH, async (c) => {
    const { db, clock } = c.get("deps");
    const secret = cookieValue(c.req.header("Cookie"), CLI_LOGIN_COOKIE);
    const form = await c.req.parseBody().catch(() => ({}) as Record<string, unknown>);
    const shownCode = typeof form.code === "string" ? form.code : "";
    c.header("Set-Cookie", cliLoginCookie("", 0));
    c.header("Cache-Control", "no-store");
    c.header("Content-Security-Policy", LOGIN_PAGE_POLICY);
    if (!secret || !LOGIN_LINK_SECRET.test(secret)) {
      return c.html(loginResultPage({ outcome: "refused", reason: "session_not_found" }), 200);
    }
    const session = c.get("session");
    if (!session) throw new Error("requireSession set no session");
    const login = await completeLoginForPerson(db, clock, {
      browserSecret: secret,
      userId: session.userId,
      shownCode,
    });
    c.get("log").info("cli login approved", { outcome: login.outcome });
    return c.html(loginResultPage(login), 200);
  });
}
