import { sql } from "drizzle-orm";
import { programs } from "../../schema/programs.ts";
import { workspaceMembers } from "../../schema/workspaces.ts";
import type { Database } from "../db/client.ts";
import { fromDriver } from "../db/columns.ts";

export type MyProgram = {
  id: number;
  name: string;
  domain: string;
  workspace_id: number;
  role: string;
  created_at: string;
};

/** The programs of every workspace where the person has an active membership, with their role there. */
export async function listMyPrograms(db: Database, userId: number): Promise<MyProgram[]> {
  const p = programs;
  const m = workspaceMembers;
  const result = await db.execute<MyProgram>(sql`
    select ${p.id} as id, ${p.name} as name, ${p.domain} as domain, ${p.advertiserId} as workspace_id,
           ${m.role} as role, ${p.createdAt} as created_at
    from ${p} join ${m} on ${m.advertiserId} = ${p.advertiserId}
    where ${m.userId} = ${userId} and ${m.status} = 'active'
    order by ${p.id} limit 1000`);
  return result.rows.map((row) => ({
    id: fromDriver(p.id, row.id),
    name: row.name,
    domain: row.domain,
    workspace_id: fromDriver(p.advertiserId, row.workspace_id),
    role: row.role,
    created_at: fromDriver(p.createdAt, row.created_at).toISOString(),
  }));
}
