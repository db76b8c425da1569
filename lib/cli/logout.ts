import { and, eq, isNull } from "drizzle-orm";
import { cliLoginTokens } from "../../schema/cli-login.ts";
import { sha256Hex } from "../auth/api-keys.ts";
import type { Clock } from "../clock.ts";
import type { Database } from "../db/client.ts";

/**
 * Revokes a login token (one round trip). Idempotent and silent: logging out with a token that is unknown,
 * expired or already revoked also succeeds, so `logout` never tells a caller whether a token existed.
 */
export async function logout(db: Database, clock: Clock, token: string): Promise<{ revoked: boolean }> {
  const revoked = await db
    .update(cliLoginTokens)
    .set({ revokedAt: clock.now() })
    .where(and(eq(cliLoginTokens.tokenHash, await sha256Hex(token)), isNull(cliLoginTokens.revokedAt)))
    .returning({ id: cliLoginTokens.id });
  return { revoked: revoked.length > 0 };
}
