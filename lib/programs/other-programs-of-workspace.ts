import { type SQL, sql } from "drizzle-orm";
import { alias } from "drizzle-orm/pg-core";
import { programs } from "../../schema/programs.ts";

/**
 * The ids of the workspace's other programs, as a subquery. A customer key is the brand's own id of its
 * customer, so it can name a customer of another program of the same brand; another workspace's customer
 * under the same key is another brand's: it says nothing about this program's payments, and telling one
 * brand about it would tell it about another brand's customers.
 */
export function otherProgramsOfWorkspace(programId: number): SQL {
  const mine = alias(programs, "mine");
  const other = alias(programs, "other");
  return sql`select ${other.id} from ${programs} ${other}
    where ${other.advertiserId} = (select ${mine.advertiserId} from ${programs} ${mine} where ${mine.id} = ${programId}::int)
      and ${other.id} <> ${programId}::int`;
}
