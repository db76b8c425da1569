import { sql } from "drizzle-orm";
import { partners, programPartners } from "../../../schema/partners.ts";
import type { Database } from "../../db/client.ts";
import { fromDriver } from "../../db/columns.ts";

export interface ProgramPartner {
  id: number;
  name: string;
}

/** The active partners of a program: whom the page's "create a link" form may choose (oldest first). */
export async function readActivePartners(db: Database, programId: number): Promise<ProgramPartner[]> {
  const pa = partners;
  const pp = programPartners;
  const result = await db.execute<{ id: number; name: string }>(sql`
    select ${pa.id} as id, ${pa.name} as name from ${pp} join ${pa} on ${pa.id} = ${pp.partnerId}
    where ${pp.programId} = ${programId} and ${pp.status} = 'active' order by ${pa.id} limit 1000`);
  return result.rows.map((row) => ({ id: fromDriver(pa.id, row.id), name: row.name }));
}
