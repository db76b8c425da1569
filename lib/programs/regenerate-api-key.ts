import { sql } from "drizzle-orm";
import { issueApiKey, maskApiKey } from "../auth/api-keys.ts";
import { requireProgramMembership } from "../auth/require-program-membership.ts";
import type { Database } from "../db/client.ts";
import { withConflictRetry } from "../db/errors.ts";
import { decideKeyRegeneration } from "./decide-key-regeneration.ts";

export interface RetiredKey {
  masked: string;
  /** Set when the old key stopped at once. */
  revokedAt: Date | null;
  /** Set when the old key keeps working until this deadline. */
  rotateBy: Date | null;
}

export type RegenerateResult =
  | {
      ok: true;
      apiKey: string;
      masked: string;
      isTest: boolean;
      mode: "immediate" | "rotate";
      previous: RetiredKey[];
    }
  | { ok: false; reason: "no_access" | "not_owner" }
  | { ok: false; reason: "invalid"; field: string; message: string };

/**
 * Owners only. One transaction: a per-program advisory lock (two regenerations at once queue, so exactly
 * one key of the mode is left current), the owner check again, the old keys of that mode revoked or marked
 * for rotation, the new key's hash stored, the audit entry. The new key is returned this once.
 */
export async function regenerateApiKey(
  db: Database,
  input: { userId: number; programId: number | undefined; body: Record<string, unknown>; now: Date },
): Promise<RegenerateResult> {
  return withConflictRetry(async () => {
    const membership = await requireProgramMembership(db, input.userId, input.programId);
    if (!membership.ok || input.programId === undefined) return { ok: false, reason: "no_access" };
    if (membership.role !== "owner") return { ok: false, reason: "not_owner" };
    const decision = decideKeyRegeneration(input.body, input.now);
    if (!decision.ok)
      return { ok: false, reason: "invalid", field: decision.field, message: decision.message };
    const programId = input.programId;
    const issued = await issueApiKey(decision.isTest);
    const masked = maskApiKey(issued.keyPrefix, issued.keyLast4);
    const at = input.now.toISOString();
    const rotateBy = decision.rotateBy?.toISOString() ?? null;
    const [, , written] = await db.batch([
      db.execute(sql`select pg_advisory_xact_lock(71401, ${programId})`),
      db.execute(sql`
        select guard(exists (select 1 from programs p
                             join workspace_members m on m.advertiser_id = p.advertiser_id
                             where p.id = ${programId} and m.user_id = ${input.userId}
                               and m.status = 'active' and m.role = 'owner'), 'key owner')`),
      db.execute<{
        key_prefix: string;
        key_last4: string | null;
        revoked_at: string | null;
        rotate_by: string | null;
      }>(sql`
        with old as (
          update program_api_keys set
            revoked_at = case when ${decision.mode}::text = 'immediate' then ${at}::timestamptz else revoked_at end,
            rotation_marked_at = case when ${decision.mode}::text = 'rotate'
                                      then coalesce(rotation_marked_at, ${at}::timestamptz)
                                      else rotation_marked_at end,
            rotate_by = case when ${decision.mode}::text = 'rotate'
                             then least(coalesce(rotate_by, ${rotateBy}::timestamptz), ${rotateBy}::timestamptz)
                             else rotate_by end
          where program_id = ${programId} and is_test = ${decision.isTest} and revoked_at is null
          returning key_prefix, key_last4, revoked_at, rotate_by
        ), fresh as (
          insert into program_api_keys (program_id, key_hash, key_prefix, key_last4, is_test, created_at)
          values (${programId}, ${issued.keyHash}, ${issued.keyPrefix}, ${issued.keyLast4}, ${decision.isTest},
                  ${at}::timestamptz)
          returning id
        ), audit as (
          insert into audit_log (advertiser_id, program_id, actor_user_id, action, changes, created_at)
          select p.advertiser_id, p.id, ${input.userId}, 'program.api_key_regenerated',
                 jsonb_build_object(
                   ${decision.isTest ? "test_api_key" : "api_key"}::text,
                   jsonb_build_object(
                     'from', (select coalesce(jsonb_agg(old.key_prefix || '...' || coalesce(old.key_last4, '')), '[]'::jsonb) from old),
                     'to', ${masked}::text),
                   'mode', jsonb_build_object('from', null, 'to', ${decision.mode}::text),
                   'rotate_by', jsonb_build_object('from', null, 'to', ${rotateBy}::text)),
                 ${at}::timestamptz
          from programs p where p.id = ${programId}
          returning id
        )
        -- Data-modifying CTEs run whether or not the final select reads them.
        select * from old`),
    ]);
    return {
      ok: true,
      apiKey: issued.key,
      masked,
      isTest: decision.isTest,
      mode: decision.mode,
      previous: written.rows.map((row) => ({
        masked: maskApiKey(row.key_prefix, row.key_last4),
        revokedAt: row.revoked_at ? new Date(row.revoked_at) : null,
        rotateBy: row.rotate_by ? new Date(row.rotate_by) : null,
      })),
    };
  });
}
