/**
 * `npm run db:kept-plans`: prints the `CREATE OR REPLACE FUNCTION` of every kept-plan statement
 * (`lib/db/kept-plan.ts`), sequence (`lib/db/kept-plan-sequence.ts`), batch (`lib/db/kept-plan-batch.ts`, and
 * `lib/db/kept-plan-write-batch.ts`) and procedure (`lib/db/kept-plan-procedure.ts`), as a
 * migration holds them. When a kept statement changes in TypeScript,
 * `test/node/kept-plans.test.ts` fails until a new migration carries its definition from here.
 */
import {
  keptPlanBatches,
  keptPlanProcedures,
  keptPlanSequences,
  keptPlanStatements,
  keptPlanWriteBatches,
} from "../lib/kept-plan-statements.ts";

const names = process.argv.slice(2);
const chosen = [
  ...keptPlanStatements,
  ...keptPlanSequences,
  ...keptPlanBatches,
  ...keptPlanWriteBatches,
  ...keptPlanProcedures,
].filter((s) => names.length === 0 || names.includes(s.functionName));
console.log(chosen.map((s) => s.definition()).join("\n--> statement-breakpoint\n"));
