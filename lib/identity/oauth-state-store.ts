import { sql } from "drizzle-orm";
import { oauthStates } from "../../schema/accounts.ts";
import { sha256Hex } from "../auth/api-keys.ts";
import type { Database } from "../db/client.ts";
import { columnList, fromDriverOrNull } from "../db/columns.ts";
import { base64Url } from "../ids.ts";

/** A redirect flow in progress lives this long (the person types an email, or approves at the provider). */
export const OAUTH_STATE_LIFETIME_SECONDS = 600;

export interface OauthStateData {
  purpose: "sign_in" | "stripe_connect";
  nonce?: string | null;
  codeVerifier?: string | null;
  userId?: number | null;
  programId?: number | null;
}

export function newState(): string {
  return base64Url(crypto.getRandomValues(new Uint8Array(32)));
}

/** Stores the flow under the SHA-256 of its state (the state itself travels in the URL and a cookie). */
export async function saveOauthState(
  db: Database,
  state: string,
  data: OauthStateData,
  now: Date,
): Promise<void> {
  const expiresAt = new Date(now.getTime() + OAUTH_STATE_LIFETIME_SECONDS * 1000);
  const o = oauthStates;
  await db.execute(sql`
    insert into ${o} (${columnList(o.stateHash, o.purpose, o.nonce, o.codeVerifier, o.userId, o.programId, o.expiresAt)})
    values (${await sha256Hex(state)}, ${data.purpose}, ${data.nonce ?? null}::text, ${data.codeVerifier ?? null}::text,
            ${data.userId ?? null}::int, ${data.programId ?? null}::int, ${expiresAt.toISOString()}::timestamptz)`);
}

/** Takes the flow out (once): a second callback with the same state, or a late one, finds nothing. */
export async function consumeOauthState(
  db: Database,
  state: string,
  purpose: OauthStateData["purpose"],
  now: Date,
): Promise<OauthStateData | null> {
  const o = oauthStates;
  const result = await db.execute<{
    purpose: OauthStateData["purpose"];
    nonce: string | null;
    code_verifier: string | null;
    user_id: number | null;
    program_id: number | null;
    live: boolean;
  }>(sql`
    delete from ${o} where ${o.stateHash} = ${await sha256Hex(state)} and ${o.purpose} = ${purpose}
    returning ${o.purpose} as purpose, ${o.nonce} as nonce, ${o.codeVerifier} as code_verifier,
              ${o.userId} as user_id, ${o.programId} as program_id,
              ${o.expiresAt} > ${now.toISOString()}::timestamptz as live`);
  const row = result.rows[0];
  if (!row?.live) return null;
  return {
    purpose: row.purpose,
    nonce: row.nonce,
    codeVerifier: row.code_verifier,
    userId: fromDriverOrNull(o.userId, row.user_id),
    programId: fromDriverOrNull(o.programId, row.program_id),
  };
}
