import { sql } from "drizzle-orm";
import type { Database } from "../db/client.ts";
import { ABSOLUTE_LIFETIME_SECONDS, SLIDING_LIFETIME_SECONDS } from "./sign-in-tokens.ts";

export interface SessionRecord {
  tokenId: number;
  userId: number;
  blocked: boolean;
  expiresAt: Date;
}

/**
 * One round trip: finds a live token (not revoked, not expired) and slides its expiry, never past the
 * absolute limit. An expired or revoked token matches nothing.
 */
export async function touchSession(
  db: Database,
  tokenHash: string,
  now: Date,
): Promise<SessionRecord | null> {
  const at = now.toISOString();
  const result = await db.execute<{ id: number; user_id: number; blocked: boolean; expires_at: string }>(sql`
    update sign_in_tokens t
       set last_used_at = ${at}::timestamptz,
           expires_at = least(${at}::timestamptz + make_interval(secs => ${SLIDING_LIFETIME_SECONDS}), t.absolute_expires_at)
      from users u
     where t.token_hash = ${tokenHash} and u.id = t.user_id
       and t.revoked_at is null and t.expires_at > ${at}::timestamptz
    returning t.id, t.user_id, u.blocked_at is not null as blocked, t.expires_at`);
  const row = result.rows[0];
  if (!row) return null;
  return {
    tokenId: Number(row.id),
    userId: Number(row.user_id),
    blocked: row.blocked,
    expiresAt: new Date(row.expires_at),
  };
}

export async function createSession(
  db: Database,
  userId: number,
  tokenHash: string,
  now: Date,
): Promise<Date> {
  const expiresAt = new Date(now.getTime() + SLIDING_LIFETIME_SECONDS * 1000);
  const absolute = new Date(now.getTime() + ABSOLUTE_LIFETIME_SECONDS * 1000);
  await db.execute(sql`
    insert into sign_in_tokens (user_id, token_hash, created_at, last_used_at, expires_at, absolute_expires_at)
    values (${userId}, ${tokenHash}, ${now.toISOString()}::timestamptz, ${now.toISOString()}::timestamptz,
            ${expiresAt.toISOString()}::timestamptz, ${absolute.toISOString()}::timestamptz)`);
  return expiresAt;
}

export async function revokeSession(db: Database, tokenId: number, now: Date): Promise<void> {
  await db.execute(sql`
    update sign_in_tokens set revoked_at = ${now.toISOString()}::timestamptz
     where id = ${tokenId} and revoked_at is null`);
}
