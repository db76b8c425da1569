import { createRoute, type OpenAPIHono, z } from "@hono/zod-openapi";
import { createSession, revokeSession } from "../../../../lib/auth/session-store.ts";
import { clearedSessionCookie, issueSignInToken } from "../../../../lib/auth/sign-in-tokens.ts";
import {
  okResponse,
  platformErrorResponse,
  rateLimitedResponse,
} from "../../../../lib/errors/openapi-responses.ts";
import type { AppEnv } from "../../../../lib/http/app-env.ts";
import { errorPolicy } from "../../../../lib/http/dependencies.ts";
import { rateLimit } from "../../../../lib/http/rate-limit.ts";
import { requireSession } from "../../../../lib/http/require-session.ts";
import { readSessionSummary } from "../../../../lib/identity/session-summary.ts";
import { rateLimits } from "../../../../lib/ratelimit/policies.ts";

const sessionErrors = {
  401: platformErrorResponse("No sign-in token; an unknown, expired or revoked one; or a program API key"),
  403: platformErrorResponse(
    "Suspended account (`ACCOUNT_BLOCKED`), or a cookie-authenticated write from another origin",
  ),
  429: rateLimitedResponse,
  500: platformErrorResponse("Internal server error"),
};

const SessionSchema = z
  .object({
    success: z.literal(true),
    data: z.object({
      user: z.object({ id: z.number().int(), email: z.string() }),
      workspaces: z.array(z.object({ advertiser_id: z.number().int(), name: z.string(), role: z.string() })),
    }),
  })
  .openapi("Session");

const TokenSchema = z
  .object({
    success: z.literal(true),
    data: z.object({ token: z.string(), token_type: z.literal("Bearer"), expires_at: z.string() }),
  })
  .openapi("SignInToken");

export const sessionRoute = createRoute({
  method: "get",
  path: "/api/v1/auth/session",
  tags: ["Sign-in"],
  summary: "The signed-in person and their workspaces",
  security: [{ bearerAuth: [] }, { sessionCookie: [] }],
  responses: { 200: okResponse("Signed in", SessionSchema), ...sessionErrors },
});

export const tokenRoute = createRoute({
  method: "post",
  path: "/api/v1/auth/tokens",
  tags: ["Sign-in"],
  summary: "Issue a dashboard sign-in token for API callers (shown once)",
  description:
    "For scripts calling the settings routes with `Authorization: Bearer`: a new token of the signed-in " +
    "person (7 days sliding, 30 days at most). Authenticated by the sign-in cookie (same-origin) or a token.",
  security: [{ bearerAuth: [] }, { sessionCookie: [] }],
  responses: { 200: okResponse("The new token", TokenSchema), ...sessionErrors },
});

export const signOutRoute = createRoute({
  method: "post",
  path: "/api/v1/auth/sign-out",
  tags: ["Sign-in"],
  summary: "Revoke the sign-in token used for this request and clear the cookie",
  security: [{ bearerAuth: [] }, { sessionCookie: [] }],
  responses: {
    200: okResponse(
      "Signed out",
      z.object({ success: z.literal(true), data: z.object({ signed_out: z.literal(true) }) }),
    ),
    ...sessionErrors,
  },
});

export function registerSession(app: OpenAPIHono<AppEnv>): void {
  for (const route of [sessionRoute, tokenRoute, signOutRoute]) {
    app.use(
      route.path,
      errorPolicy("Internal server error"),
      rateLimit(rateLimits.dashboard),
      requireSession,
    );
  }
  app.openapi(sessionRoute, async (c) => {
    const session = c.get("session")!;
    return c.json(
      { success: true as const, data: await readSessionSummary(c.get("deps").db, session.userId) },
      200,
    );
  });
  app.openapi(tokenRoute, async (c) => {
    const { db, clock } = c.get("deps");
    const issued = await issueSignInToken();
    const expiresAt = await createSession(db, c.get("session")!.userId, issued.tokenHash, clock.now());
    return c.json(
      {
        success: true as const,
        data: { token: issued.token, token_type: "Bearer" as const, expires_at: expiresAt.toISOString() },
      },
      200,
    );
  });
  app.openapi(signOutRoute, async (c) => {
    const { db, clock } = c.get("deps");
    await revokeSession(db, c.get("session")!.tokenId, clock.now());
    c.header("Set-Cookie", clearedSessionCookie());
    return c.json({ success: true as const, data: { signed_out: true as const } }, 200);
  });
}
