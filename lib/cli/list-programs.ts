import { and, asc, eq, inArray } from "drizzle-orm";
import { cliLoginTokens } from "../../schema/cli-login.ts";
import { programs } from "../../schema/programs.ts";
import { workspaceMembers } from "../../schema/workspaces.ts";
import type { BearerHeader } from "../auth/bearer.ts";
import type { Database } from "../db/client.ts";
import { evaluateLoginToken, type LoginTokenRefusal, loginTokenQuery } from "./login-token-auth.ts";

export interface ListedProgram {
  id: number;
  name: string;
  domain: string;
  workspace_id: number;
  commission_type: string;
  commission_rate: number;
  created_at: string;
}

export type ListProgramsResult =
  | { outcome: "refused"; reason: LoginTokenRefusal }
  | { outcome: "listed"; userId: number; programs: ListedProgram[] };

/**
 * `programs`: the programs of every workspace where the token's person has an active membership. One round
 * trip: the token check and the list are one batch; the list joins through the token's hash, so it is
 * only used when the token turned out good.
 */
export async function listPrograms(
  db: Database,
  now: Date,
  header: BearerHeader,
  tokenHash: string,
): Promise<ListProgramsResult> {
  const workspacesOfToken = db
    .select({ advertiserId: workspaceMembers.advertiserId })
    .from(workspaceMembers)
    .innerJoin(cliLoginTokens, eq(cliLoginTokens.userId, workspaceMembers.userId))
    .where(and(eq(cliLoginTokens.tokenHash, tokenHash), eq(workspaceMembers.status, "active")));
  const [tokenRows, programRows] = await db.batch([
    loginTokenQuery(db, tokenHash),
    db
      .select()
      .from(programs)
      .where(inArray(programs.advertiserId, workspacesOfToken))
      .orderBy(asc(programs.id)),
  ]);
  const verdict = evaluateLoginToken(header, tokenRows[0], now);
  if (!verdict.ok) return { outcome: "refused", reason: verdict.reason };
  return {
    outcome: "listed",
    userId: verdict.userId,
    programs: programRows.map((p) => ({
      id: p.id,
      name: p.name,
      domain: p.domain,
      workspace_id: p.advertiserId,
      commission_type: p.commissionType,
      commission_rate: Number(p.commissionRate),
      created_at: p.createdAt.toISOString(),
    })),
  };
}
