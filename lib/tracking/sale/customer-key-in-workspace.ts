import { sql } from "drizzle-orm";
import { customers } from "../../../schema/customers.ts";
import type { Database } from "../../db/client.ts";
import { otherProgramsOfWorkspace } from "../../programs/other-programs-of-workspace.ts";

/**
 * Whether another program of the same workspace has a (live) customer under this `customer_key`. Read only
 * when a sale's key and click resolved nothing: its answer turns `Customer not found` into the spec's
 * "customer belongs to another program" refusal, which may name another program of the same brand only.
 * One round trip, on that refusal's path alone. Only customers count, live ones: the spec's customer holds the
 * key once a lead settled, and a test customer is no customer of the program's real state. (The provider's
 * events ask a wider question, whether the key may belong to another program's customer at all, to keep a
 * payment from being attributed here, so they also count other programs' open leads under the key.)
 */
export async function customerKeyInOtherProgramOfWorkspace(
  db: Database,
  programId: number,
  customerKey: string,
): Promise<boolean> {
  const result = await db.execute<{ found: boolean }>(sql`
    select exists (
      select 1 from ${customers}
      where ${customers.customerKey} = ${customerKey}::text
        and ${customers.programId} in (${otherProgramsOfWorkspace(programId)})
        and not ${customers.isTest}) as found`);
  return result.rows[0]?.found === true;
}
