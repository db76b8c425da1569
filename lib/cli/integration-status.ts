import { type SQL, sql } from "drizzle-orm";
import { clickEvents, leadEvents, saleEvents } from "../../schema/events.ts";
import { programs } from "../../schema/programs.ts";
import type { Database } from "../db/client.ts";
import { fromDriver, fromDriverOrNull } from "../db/columns.ts";

export interface StepStatus {
  /** A real (live) event of this kind was recorded. */
  live: boolean;
  /** A test event of this kind was recorded (for leads: only one sent with the program key counts). */
  test: boolean;
  last_at: string | null;
}

export interface IntegrationStatus {
  program: { id: number; name: string; domain: string };
  verified: boolean;
  steps: { click: StepStatus; lead: StepStatus; sale: StepStatus };
  next_step: string | null;
}

const step = (live: boolean, test: boolean, last: Date | null): StepStatus => ({
  live,
  test,
  last_at: last?.toISOString() ?? null,
});

/** Each step's newest event, live and test, found through the (program, created_at) indexes without a scan. */
function newest(table: typeof clickEvents | typeof saleEvents, programId: SQL, test: boolean) {
  return sql`(select max(${table.createdAt}) from ${table}
              where ${table.programId} = ${programId} and ${table.isTest} = ${test})`;
}

/**
 * The program's integration status for `status`: which of click, lead and sale reached the service (live,
 * or as test events; a test lead counts only when sent with the program key), whether the integration is
 * verified (each step seen at least once), and what to do next. One statement, for the caller's read batch;
 * `programId` may be a subquery (the program of the Bearer key), so key and status are read together.
 */
export function integrationStatusQuery(db: Database, programId: SQL) {
  return db.execute(sql`
    select ${programs.id} as id, ${programs.name} as name, ${programs.domain} as domain,
      ${newest(clickEvents, programId, false)} as click_live, ${newest(clickEvents, programId, true)} as click_test,
      (select max(${leadEvents.createdAt}) from ${leadEvents}
        where ${leadEvents.programId} = ${programId} and not ${leadEvents.isTest}) as lead_live,
      (select max(${leadEvents.createdAt}) from ${leadEvents}
        where ${leadEvents.programId} = ${programId} and ${leadEvents.isTest} and ${leadEvents.viaApiKey}) as lead_test,
      ${newest(saleEvents, programId, false)} as sale_live, ${newest(saleEvents, programId, true)} as sale_test
    from ${programs} where ${programs.id} = ${programId}`);
}

export function integrationStatusFrom(row: Record<string, unknown>): IntegrationStatus {
  // Every newest time is a max() of a created_at column, read as that column reads.
  const latest = (a: unknown, b: unknown) => {
    const times = [a, b]
      .flatMap((v) => fromDriverOrNull(clickEvents.createdAt, v) ?? [])
      .map((t) => t.getTime());
    return times.length ? new Date(Math.max(...times)) : null;
  };
  const steps = {
    click: step(row.click_live !== null, row.click_test !== null, latest(row.click_live, row.click_test)),
    lead: step(row.lead_live !== null, row.lead_test !== null, latest(row.lead_live, row.lead_test)),
    sale: step(row.sale_live !== null, row.sale_test !== null, latest(row.sale_live, row.sale_test)),
  };
  const missing = (["click", "lead", "sale"] as const).find((name) => !steps[name].live && !steps[name].test);
  return {
    program: {
      id: fromDriver(programs.id, row.id),
      name: fromDriver(programs.name, row.name),
      domain: fromDriver(programs.domain, row.domain),
    },
    verified: missing === undefined,
    steps,
    next_step: missing
      ? `No ${missing} recorded yet: send one from your integration, or run \`affiliate-tracking-service test ${missing}\`.`
      : null,
  };
}
