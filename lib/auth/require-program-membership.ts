import { and, eq } from "drizzle-orm";
import { programs } from "../../schema/programs.ts";
import { type memberRoles, workspaceMembers } from "../../schema/workspaces.ts";
import type { Database } from "../db/client.ts";

export type MemberRole = (typeof memberRoles)[number];

/**
 * The signed-in person's access to one program: the role of their active membership on the program's
 * workspace, or a refusal. A program that does not exist, another workspace's program and a removed or
 * invited membership are one and the same refusal, so a caller learns nothing about programs not theirs.
 */
export type ProgramMembership =
  | { ok: true; role: MemberRole; advertiserId: number }
  | { ok: false; reason: "no_active_membership" };

/** One round trip. */
export async function requireProgramMembership(
  db: Database,
  userId: number,
  programId: number,
): Promise<ProgramMembership> {
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
    : { ok: false, reason: "no_active_membership" };
}
