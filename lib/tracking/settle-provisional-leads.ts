import { sql } from "drizzle-orm";
import { leadEvents } from "../../schema/events.ts";
import { columnName } from "../db/columns.ts";
import { keptPlanStatement } from "../db/kept-plan.ts";
import { customerByClick } from "./customer-by-click.ts";

/**
 * A settling lead or payment (spec section 3, Lead) marks its click's open provisional leads settled, naming
 * the customer: `customerId`, or the one the same write creates from the click (`customerProgramId`,
 * `customerClickId`). A step of the server lead's write and of the sale's (`keptPlanStatement`, migration
 * 0041), written as the partial index's predicate so the plan uses it.
 */
export const provisionalLeadsSettle = keptPlanStatement({
  functionName: "settle_provisional_leads",
  names: ["programId", "clickId", "settledAt", "customerId", "customerProgramId", "customerClickId"],
  parameterTypes: {
    programId: "integer",
    clickId: "text",
    settledAt: "timestamp with time zone",
    customerId: "bigint",
    customerProgramId: "integer",
    customerClickId: "text",
  },
  returns: [],
  build: (v) => {
    const l = leadEvents;
    return sql`
      update ${l}
      set ${columnName(l.settledAt)} = ${v.settledAt}::timestamptz,
          ${columnName(l.customerId)} =
            coalesce(${v.customerId}::bigint, ${customerByClick(v.customerProgramId, v.customerClickId)})
      where ${l.programId} = ${v.programId}::int and ${l.clickId} = ${v.clickId}::text
        and ${l.provisional} and ${l.settledAt} is null and not ${l.isTest}`;
  },
});
