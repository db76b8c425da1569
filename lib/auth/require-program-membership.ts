import { sql } from "drizzle-orm";
import type { Database } from "../db/client.ts";
import { platformError } from "../errors/api-error.ts";

export type MemberRole = "owner" | "admin" | "member";

/** The signed-in person's standing on a program: their active role on its workspace, or a refusal. */
export type ProgramMembership =
  | { ok: true; role: MemberRole; advertiserId: number }
  | { ok: false; reason: "no_access" };

/**
 * One message for "another workspace's program", "no such program" and "no active membership": the
 * answer is the same 403 in each case, so program ids cannot be probed.
 */
export const PROGRAM_ACCESS_REFUSED = "You do not have access to this program";

export function programAccessRefused() {
  return platformError(403, PROGRAM_ACCESS_REFUSED);
}

const maxInt4 = 2_147_483_647;

/** A path's program id: a positive 32-bit integer, or undefined (answered like an unknown program). */
export function parseProgramId(value: string | undefined): number | undefined {
  if (!value || !/^[1-9]\d{0,9}$/.test(value)) return undefined;
  const id = Number(value);
  return id <= maxInt4 ? id : undefined;
}

/** One round trip: the caller's active membership on the workspace that owns the program. */
export async function requireProgramMembership(
  db: Database,
  userId: number,
  programId: number | undefined,
): Promise<ProgramMembership> {
  if (programId === undefined) return { ok: false, reason: "no_access" };
  const read = await db.execute<{ role: MemberRole; advertiser_id: number }>(sql`
    select m.role, m.advertiser_id
    from programs p
    join workspace_members m on m.advertiser_id = p.advertiser_id
    where p.id = ${programId} and m.user_id = ${userId} and m.status = 'active'`);
  const row = read.rows[0];
  if (!row) return { ok: false, reason: "no_access" };
  return { ok: true, role: row.role, advertiserId: Number(row.advertiser_id) };
}
