import { and, eq } from "drizzle-orm";
import { programs } from "../../schema/programs.ts";
import { type memberRoles, workspaceMembers } from "../../schema/workspaces.ts";
import type { Database } from "../db/client.ts";
import { platformError } from "../errors/api-error.ts";

export type MemberRole = (typeof memberRoles)[number];

/**
 * The signed-in person's access to one program: the role of their active membership on the program's
 * workspace, or a refusal. A program that does not exist, another workspace's program and a removed or
 * invited membership are one and the same refusal, so a caller learns nothing about programs not theirs.
 */
export type ProgramMembership =
  | { ok: true; role: MemberRole; advertiserId: number }
  | { ok: false; reason: "no_access" };

/** The one message of that refusal (403), on the settings and the dashboard routes alike. */
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
  const rows = await db
    .select({ role: workspaceMembers.role, advertiserId: programs.advertiserId })
    .from(programs)
    .innerJoin(
      workspaceMembers,
      and(
        eq(workspaceMembers.advertiserId, programs.advertiserId),
        eq(workspaceMembers.userId, userId),
        eq(workspaceMembers.status, "active"),
      ),
    )
    .where(eq(programs.id, programId))
    .limit(1);
  const row = rows[0];
  return row
    ? { ok: true, role: row.role, advertiserId: row.advertiserId }
    : { ok: false, reason: "no_access" };
}
