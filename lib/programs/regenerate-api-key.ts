import { sql } from "drizzle-orm";
import { auditLog } from "../../schema/accounts.ts";
import { programApiKeys, programs } from "../../schema/programs.ts";
import { workspaceMembers } from "../../schema/workspaces.ts";
import { issueApiKey, maskApiKey } from "../auth/api-keys.ts";
import { requireProgramMembership } from "../auth/require-program-membership.ts";
import type { Database } from "../db/client.ts";
import { columnList, columnName, fromDriverOrNull } from "../db/columns.ts";
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
    const p = programs;
    const m = workspaceMembers;
    const k = programApiKeys;
    const a = auditLog;
    const [, , written] = await db.batch([
      db.execute(sql`select pg_advisory_xact_lock(71401, ${programId})`),
      db.execute(sql`
        select guard(exists (select 1 from ${p}
                             join ${m} on ${m.advertiserId} = ${p.advertiserId}
                             where ${p.id} = ${programId} and ${m.userId} = ${input.userId}
                               and ${m.status} = 'active' and ${m.role} = 'owner'), 'key owner')`),
      // Ends in `select * from old`: data-modifying CTEs run whether or not the final select reads them.
      db.execute<{
        key_prefix: string;
        key_last4: string | null;
        revoked_at: string | null;
        rotate_by: string | null;
      }>(sql`
        with old as (
          update ${k} set
            ${columnName(k.revokedAt)} = case when ${decision.mode}::text = 'immediate' then ${at}::timestamptz else ${k.revokedAt} end,
            ${columnName(k.rotationMarkedAt)} = case when ${decision.mode}::text = 'rotate'
                                      then coalesce(${k.rotationMarkedAt}, ${at}::timestamptz)
                                      else ${k.rotationMarkedAt} end,
            ${columnName(k.rotateBy)} = case when ${decision.mode}::text = 'rotate'
                             then least(coalesce(${k.rotateBy}, ${rotateBy}::timestamptz), ${rotateBy}::timestamptz)
                             else ${k.rotateBy} end
          where ${k.programId} = ${programId} and ${k.isTest} = ${decision.isTest} and ${k.revokedAt} is null
          returning ${k.keyPrefix} as key_prefix, ${k.keyLast4} as key_last4, ${k.revokedAt} as revoked_at,
                    ${k.rotateBy} as rotate_by
        ), fresh as (
          insert into ${k} (${columnList(k.programId, k.keyHash, k.keyPrefix, k.keyLast4, k.isTest, k.createdAt)})
          values (${programId}, ${issued.keyHash}, ${issued.keyPrefix}, ${issued.keyLast4}, ${decision.isTest},
                  ${at}::timestamptz)
          returning ${k.id}
        ), audit as (
          insert into ${a} (${columnList(a.advertiserId, a.programId, a.actorUserId, a.action, a.changes, a.createdAt)})
          select ${p.advertiserId}, ${p.id}, ${input.userId}, 'program.api_key_regenerated',
                 jsonb_build_object(
                   ${decision.isTest ? "test_api_key" : "api_key"}::text,
                   jsonb_build_object(
                     'from', (select coalesce(jsonb_agg(old.key_prefix || '...' || coalesce(old.key_last4, '')), '[]'::jsonb) from old),
                     'to', ${masked}::text),
                   'mode', jsonb_build_object('from', null, 'to', ${decision.mode}::text),
                   'rotate_by', jsonb_build_object('from', null, 'to', ${rotateBy}::text)),
                 ${at}::timestamptz
          from ${p} where ${p.id} = ${programId}
          returning ${a.id}
        )
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
        revokedAt: fromDriverOrNull(k.revokedAt, row.revoked_at),
        rotateBy: fromDriverOrNull(k.rotateBy, row.rotate_by),
      })),
    };
  });
}
