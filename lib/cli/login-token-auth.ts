import { eq } from "drizzle-orm";
import { cliLoginTokens } from "../../schema/cli-login.ts";
import { users } from "../../schema/workspaces.ts";
import type { BearerHeader } from "../auth/bearer.ts";
import type { Database } from "../db/client.ts";

/** Why a login token did not authenticate; each route words these its own way (spec section 7). */
export type LoginTokenRefusal = "missing" | "invalid_or_expired" | "user_not_found";

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
 * person blocked after logging in is refused as `User not found` (the token names nobody usable).
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
  if (row.email === null || row.blockedAt !== null) return { ok: false, reason: "user_not_found" };
  return { ok: true, userId: row.userId, email: row.email, tokenId: row.tokenId };
}
