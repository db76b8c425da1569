import type { KeptPlanStatement } from "../db/kept-plan.ts";
import { clickStatement } from "./click/click-store.ts";
import { leadFactsStatement } from "./lead/lead-store.ts";
import {
  customerByKeyStatement,
  recordedSalesStatement,
  saleClickStatement,
  saleProgramStatement,
} from "./sale/sale-store.ts";

/**
 * Every statement run as a PL/pgSQL function (`keptPlanStatement`): the migrations must define each exactly
 * (`test/node/kept-plans.test.ts`), and `npm run plans` explains their bodies.
 */
export const keptPlanStatements: readonly KeptPlanStatement<readonly string[]>[] = [
  clickStatement,
  leadFactsStatement,
  saleProgramStatement,
  recordedSalesStatement,
  customerByKeyStatement,
  saleClickStatement,
];
