import { sql } from "drizzle-orm";
import { advertisers, users, workspaceMembers } from "../../schema/workspaces.ts";
import type { Database } from "../db/client.ts";

export interface SessionSummary {
  user: { id: number; email: string };
  workspaces: { advertiser_id: number; name: string; role: string }[];
}

/** The signed-in person and their active workspaces (one read). */
export async function readSessionSummary(db: Database, userId: number): Promise<SessionSummary> {
  const u = users;
  const m = workspaceMembers;
  const a = advertisers;
  const result = await db.execute<{ email: string; workspaces: string | SessionSummary["workspaces"] }>(sql`
    select ${u.email} as email,
           coalesce((select json_agg(json_build_object('advertiser_id', ${a.id}, 'name', ${a.name}, 'role', ${m.role}) order by ${a.id})
                       from ${m} join ${a} on ${a.id} = ${m.advertiserId}
                      where ${m.userId} = ${u.id} and ${m.status} = 'active'), '[]'::json) as workspaces
      from ${u} where ${u.id} = ${userId}`);
  const row = result.rows[0];
  const workspaces =
    typeof row?.workspaces === "string" ? JSON.parse(row.workspaces) : (row?.workspaces ?? []);
  return { user: { id: userId, email: row?.email ?? "" }, workspaces };
}
