import { sql } from "drizzle-orm";
import { signInTokens } from "../../schema/accounts.ts";
import { users } from "../../schema/workspaces.ts";
import type { Database } from "../db/client.ts";
import { columnList, columnName, fromDriver } from "../db/columns.ts";
import { ABSOLUTE_LIFETIME_SECONDS, SLIDING_LIFETIME_SECONDS } from "./sign-in-tokens.ts";

const t = signInTokens;
const u = users;

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
    update ${t}
       set ${columnName(t.lastUsedAt)} = ${at}::timestamptz,
           ${columnName(t.expiresAt)} = least(${at}::timestamptz + make_interval(secs => ${SLIDING_LIFETIME_SECONDS}), ${t.absoluteExpiresAt})
      from ${u}
     where ${t.tokenHash} = ${tokenHash} and ${u.id} = ${t.userId}
       and ${t.revokedAt} is null and ${t.expiresAt} > ${at}::timestamptz
    returning ${t.id} as id, ${t.userId} as user_id, ${u.blockedAt} is not null as blocked, ${t.expiresAt} as expires_at`);
  const row = result.rows[0];
  if (!row) return null;
  return {
    tokenId: fromDriver(t.id, row.id),
    userId: fromDriver(t.userId, row.user_id),
    blocked: row.blocked,
    expiresAt: fromDriver(t.expiresAt, row.expires_at),
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
    insert into ${t} (${columnList(t.userId, t.tokenHash, t.createdAt, t.lastUsedAt, t.expiresAt, t.absoluteExpiresAt)})
    values (${userId}, ${tokenHash}, ${now.toISOString()}::timestamptz, ${now.toISOString()}::timestamptz,
            ${expiresAt.toISOString()}::timestamptz, ${absolute.toISOString()}::timestamptz)`);
  return expiresAt;
}

export async function revokeSession(db: Database, tokenId: number, now: Date): Promise<void> {
  await db.execute(sql`
    update ${t} set ${columnName(t.revokedAt)} = ${now.toISOString()}::timestamptz
     where ${t.id} = ${tokenId} and ${t.revokedAt} is null`);
}
