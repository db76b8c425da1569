import { sql } from "drizzle-orm";
import type { Database } from "../../db/client.ts";

export interface ProgramPartner {
  id: number;
  name: string;
}

/** The active partners of a program: whom the page's "create a link" form may choose (oldest first). */
export async function readActivePartners(db: Database, programId: number): Promise<ProgramPartner[]> {
  const result = await db.execute<{ id: number; name: string }>(sql`
    select pa.id, pa.name from program_partners pp join partners pa on pa.id = pp.partner_id
    where pp.program_id = ${programId} and pp.status = 'active' order by pa.id limit 1000`);
  return result.rows.map((row) => ({ id: Number(row.id), name: row.name }));
}
