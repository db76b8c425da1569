import { createRoute, type OpenAPIHono, z } from "@hono/zod-openapi";
import { createSession } from "../../../../lib/auth/session-store.ts";
import {
  ABSOLUTE_LIFETIME_SECONDS,
  cookieValue,
  issueSignInToken,
  sessionCookie,
} from "../../../../lib/auth/sign-in-tokens.ts";
import { loginAwaitingApproval, refuseLoginForPerson } from "../../../../lib/cli/complete-login.ts";
import { loginResultPage } from "../../../../lib/cli/login-result-page.ts";
import { type ApiError, badRequest } from "../../../../lib/errors/api-error.ts";
import { platformErrorResponse, rateLimitedResponse } from "../../../../lib/errors/openapi-responses.ts";
import type { AppEnv } from "../../../../lib/http/app-env.ts";
import { errorPolicy } from "../../../../lib/http/dependencies.ts";
import { rateLimit } from "../../../../lib/http/rate-limit.ts";
import { personRefusalError } from "../../../../lib/identity/identity-errors.ts";
import { OAUTH_STATE_LIFETIME_SECONDS } from "../../../../lib/identity/oauth-state-store.ts";
import { finishSignIn, startSignIn } from "../../../../lib/identity/sign-in-flow.ts";
import { rateLimits } from "../../../../lib/ratelimit/policies.ts";
import {
  CLI_LOGIN_APPROVE_PATH,
  CLI_LOGIN_COOKIE,
  cliLoginCookie,
  LOGIN_PAGE_POLICY,
} from "../cli/login-page.ts";

/** Ties the callback to the browser that started the sign-in (login CSRF); lives as long as the flow. */
export const SIGN_IN_STATE_COOKIE = "__Host-affiliate_sign_in_state";
export const SIGN_IN_CALLBACK_PATH = "/api/v1/auth/callback";
/** Where a browser lands after signing in: the dashboard page. */
const AFTER_SIGN_IN = "/dashboard";

export const STATE_INVALID_MESSAGE = "Sign-in expired or was started in another browser. Start again.";
export const PROVIDER_REFUSED_MESSAGE = "The sign-in provider did not complete the sign-in. Start again.";

const redirectResponse = (description: string) => ({
  description,
  headers: {
    Location: { schema: { type: "string" as const } },
    "Set-Cookie": { schema: { type: "string" as const } },
  },
});

export const signInRoute = createRoute({
  method: "get",
  path: "/api/v1/auth/sign-in",
  tags: ["Sign-in"],
  // Credential: none; the browser is signing in.
  security: [],
  summary: "Start a dashboard sign-in at the OpenID Connect provider",
  description:
    "Redirects the browser to the configured provider (authorization code flow with state, nonce and PKCE). " +
    "Rate limit 30 per minute per IP. `for=cli`: started by a command-line login link (`/cli/login`), whose " +
    "cookie the callback then reads; any other sign-in clears that cookie.",
  request: { query: z.object({ for: z.string().optional() }) },
  responses: {
    302: redirectResponse("To the provider's sign-in page"),
    429: rateLimitedResponse,
    500: platformErrorResponse("Sign-in is not configured or the provider is unreachable"),
  },
});

export const callbackRoute = createRoute({
  method: "get",
  path: SIGN_IN_CALLBACK_PATH,
  tags: ["Sign-in"],
  // Credential: none; the state cookie ties the callback to the browser that started.
  security: [],
  summary: "The provider's redirect back: exchanges the code and signs the person in",
  description:
    "Sets the dashboard sign-in cookie (`__Host-affiliate_session`, HttpOnly, Secure, SameSite=Lax) and " +
    "redirects to the dashboard page (`/dashboard`); when the sign-in was started from a command-line login link " +
    "(`/cli/login`), it answers a page asking the person to approve the code their terminal shows (a form " +
    "posting to `/cli/login/approve`, which completes that login). An unverified provider email (checked first) and a suspended " +
    "account are refused with 403 and `details.code` `PROVIDER_EMAIL_NOT_VERIFIED` / `ACCOUNT_BLOCKED`.",
  request: { query: z.object({ state: z.string().optional(), code: z.string().optional() }).passthrough() },
  responses: {
    200: { description: "Signed in for a command-line login (an HTML page)" },
    303: redirectResponse("Signed in"),
    400: platformErrorResponse(
      "State missing, expired, used or from another browser; or the provider refused",
    ),
    403: {
      ...platformErrorResponse("Unverified provider email, or suspended account"),
      description:
        "Unverified provider email, or suspended account: the platform envelope, or, when the sign-in was " +
        "started from a command-line login link, an HTML page saying why (that login ends refused).",
    },
    429: rateLimitedResponse,
    500: platformErrorResponse("Sign-in failed"),
  },
});

function stateCookie(state: string, maxAge: number): string {
  return `${SIGN_IN_STATE_COOKIE}=${state}; Path=/; HttpOnly; Secure; SameSite=Lax; Max-Age=${maxAge}`;
}

export function registerSignIn(app: OpenAPIHono<AppEnv>): void {
  app.use(signInRoute.path, errorPolicy("Sign-in failed"), rateLimit(rateLimits.signIn));
  app.use(callbackRoute.path, errorPolicy("Sign-in failed"), rateLimit(rateLimits.signIn));

  app.openapi(signInRoute, async (c) => {
    const { db, config, clock } = c.get("deps");
    if (!config.identity) throw new Error("OIDC_ISSUER is not configured");
    const redirectUri = new URL(SIGN_IN_CALLBACK_PATH, c.req.url).href;
    const { authorizationUrl, state } = await startSignIn(db, config.identity, redirectUri, clock.now());
    c.header("Set-Cookie", stateCookie(state, OAUTH_STATE_LIFETIME_SECONDS));
    // A login link's cookie left from earlier (or planted by another site's navigation to a link) must not
    // turn an ordinary dashboard sign-in into someone's command-line approval page.
    if (c.req.valid("query").for !== "cli") c.header("Set-Cookie", cliLoginCookie("", 0), { append: true });
    c.header("Cache-Control", "no-store");
    return c.redirect(authorizationUrl, 302);
  });

  app.openapi(callbackRoute, async (c) => {
    const { db, config, clock } = c.get("deps");
    if (!config.identity) throw new Error("OIDC_ISSUER is not configured");
    const now = clock.now();
    const url = new URL(c.req.url);
    const result = await finishSignIn(
      db,
      config.identity,
      url,
      cookieValue(c.req.header("Cookie"), SIGN_IN_STATE_COOKIE),
      now,
    );
    c.header("Set-Cookie", stateCookie("", 0), { append: true });
    c.header("Cache-Control", "no-store");
    if (!result.ok) {
      c.get("log").info("sign-in refused", { reason: result.reason });
      // A browser (the provider sent it back here) reads the refusal as a page; an API client the envelope.
      const refuse = (error: ApiError) => {
        if (!c.req.header("Accept")?.includes("text/html")) throw error;
        // No script, style or image of its own, and no frame may hold it.
        c.header("Content-Security-Policy", "default-src 'none'; frame-ancestors 'none'");
        // Its only dynamic text is one of the fixed messages above: nothing needs escaping.
        return c.html(
          `<!doctype html><html lang="en"><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>Not signed in</title><h1>Not signed in</h1><p>${error.message}</p><p><a href="${AFTER_SIGN_IN}">Sign in again</a></p>`,
          error.status,
        );
      };
      if (result.reason === "state_invalid") return refuse(badRequest(STATE_INVALID_MESSAGE));
      if (result.reason === "provider_refused" || result.reason === "id_token_invalid") {
        return refuse(badRequest(PROVIDER_REFUSED_MESSAGE));
      }
      // Signing in for a command-line login: its session learns the refusal (its poll answers it), and the
      // person gets the login's page saying why.
      const refusedCliLogin = cookieValue(c.req.header("Cookie"), CLI_LOGIN_COOKIE);
      if (refusedCliLogin) {
        c.header("Set-Cookie", cliLoginCookie("", 0), { append: true });
        const ended = await refuseLoginForPerson(db, clock, {
          browserSecret: refusedCliLogin,
          reason: result.reason,
        });
        return c.html(loginResultPage({ outcome: "refused", reason: result.reason, loginEnded: ended }), 403);
      }
      return refuse(personRefusalError(result.reason));
    }
    const issued = await issueSignInToken();
    await createSession(db, result.userId, issued.tokenHash, now);
    c.get("log").info("signed in", { user_id: result.userId });
    c.header("Set-Cookie", sessionCookie(issued.token, ABSOLUTE_LIFETIME_SECONDS), { append: true });

    // Signed in through a command-line login link: the person approves its code before the login is theirs
    // (the link's cookie stays for the approval; a link no longer open says so at once).
    const cliLoginSecret = cookieValue(c.req.header("Cookie"), CLI_LOGIN_COOKIE);
    if (cliLoginSecret) {
      const login = await loginAwaitingApproval(db, clock, { browserSecret: cliLoginSecret });
      c.get("log").info("cli login via sign-in", { outcome: login.outcome });
      c.header("Content-Security-Policy", LOGIN_PAGE_POLICY);
      if (login.outcome !== "awaiting_approval") {
        c.header("Set-Cookie", cliLoginCookie("", 0), { append: true });
        return c.html(loginResultPage(login), 200);
      }
      return c.html(loginResultPage({ ...login, approveAction: CLI_LOGIN_APPROVE_PATH }), 200);
    }
    return c.redirect(AFTER_SIGN_IN, 303);
  });
}
