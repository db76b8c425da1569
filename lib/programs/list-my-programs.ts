import { sql } from "drizzle-orm";
import type { Database } from "../db/client.ts";

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
  const result = await db.execute<MyProgram>(sql`
    select p.id, p.name, p.domain, p.advertiser_id as workspace_id, m.role, p.created_at
    from programs p join workspace_members m on m.advertiser_id = p.advertiser_id
    where m.user_id = ${userId} and m.status = 'active'
    order by p.id limit 1000`);
  return result.rows.map((row) => ({
    id: Number(row.id),
    name: row.name,
    domain: row.domain,
    workspace_id: Number(row.workspace_id),
    role: row.role,
    created_at: new Date(row.created_at).toISOString(),
  }));
}
