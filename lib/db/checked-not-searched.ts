import { type SQL, sql } from "drizzle-orm";

/**
 * A condition PostgreSQL checks on the rows a statement found by its other conditions, and never uses to find
 * them: `(condition) is true`, which no index serves, and which keeps the same rows as `condition` in a WHERE
 * (a null is not true either).
 *
 * For a lookup by a unique key that also checks the program, such as a click by its id in the click's program:
 * a kept (generic) plan is made once per connection from the statistics of that moment, and made while the
 * tables were small or not analysed yet it walked every row of the program through the program's index,
 * filtering on the unique key, instead of looking the key up (the plan of `read_refund_facts`, now
 * `read_refund_and_repeats`, and of `read_lead_facts` on a freshly migrated database;
 * `test/node/kept-plan-lookups.test.ts`). Written so, the program cannot be searched, and the unique key is the
 * only way in.
 */
export function checkedNotSearched(condition: SQL): SQL {
  return sql`(${condition}) is true`;
}
