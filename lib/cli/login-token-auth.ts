import { eq } from "drizzle-orm";
import { cliLoginTokens } from "../../schema/cli-login.ts";
import { users } from "../../schema/workspaces.ts";
import type { BearerHeader } from "../auth/bearer.ts";
import type { Database } from "../db/client.ts";

/**
 * Why a login token did not authenticate. The first three are 401s, which each route words its own way
 * (spec section 7); `account_blocked` is the 403 every sign-in entrance shares (`ACCOUNT_BLOCKED`).
 */
export type LoginTokenRefusal = "missing" | "invalid_or_expired" | "user_not_found" | "account_blocked";

export type LoginTokenVerdict =
  | { ok: true; userId: number; email: string; tokenId: number }
  | { ok: false; reason: LoginTokenRefusal };

/** The token's row with its person, for inclusion in a route's one read batch. */
export function loginTokenQuery(db: Database, tokenHash: string) {
  return db
    .select({
      tokenId: cliLoginTokens.id,
      userId: cliLoginTokens.userId,
      expiresAt: cliLoginTokens.expiresAt,
      revokedAt: cliLoginTokens.revokedAt,
      email: users.email,
      blockedAt: users.blockedAt,
    })
    .from(cliLoginTokens)
    .leftJoin(users, eq(users.id, cliLoginTokens.userId))
    .where(eq(cliLoginTokens.tokenHash, tokenHash));
}

export type LoginTokenRow = Awaited<ReturnType<typeof loginTokenQuery>>[number];

/**
 * A login token is good while unrevoked and unexpired, and only for a person who may still sign in: a
 * person blocked after logging in is refused 403 `ACCOUNT_BLOCKED`, as their dashboard token is (the spec's
 * 403: a valid credential of a blocked account); a person deleted since, `User not found`.
 */
export function evaluateLoginToken(
  header: BearerHeader,
  row: LoginTokenRow | undefined,
  now: Date,
): LoginTokenVerdict {
  if (header.kind !== "token") return { ok: false, reason: "missing" };
  if (!row || row.revokedAt !== null || row.expiresAt.getTime() <= now.getTime()) {
    return { ok: false, reason: "invalid_or_expired" };
  }
  if (row.email === null) return { ok: false, reason: "user_not_found" };
  if (row.blockedAt !== null) return { ok: false, reason: "account_blocked" };
  return { ok: true, userId: row.userId, email: row.email, tokenId: row.tokenId };
}
