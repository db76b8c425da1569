import { sql } from "drizzle-orm";
import { alias } from "drizzle-orm/pg-core";
import { clickEvents } from "../../../schema/events.ts";
import { programs } from "../../../schema/programs.ts";
import { visitEvents } from "../../../schema/visits.ts";
import type { Database } from "../../db/client.ts";
import { columnName } from "../../db/columns.ts";
import type { VisitFacts } from "./decide-visit.ts";

export interface VisitWrite {
  clickId: string;
  programId: number | null;
  url: string;
  referrer: string | null;
  testMode: boolean;
  now: Date;
}

type VisitRow = {
  click: {
    click_id: string;
    program_id: number;
    partner_id: number;
    is_test: boolean;
    allowed_origins: string[];
  } | null;
  recorded: boolean;
};

/**
 * Finds the visitor's original click (a click logged through a second partner's link resolves to the first
 * one) and records the visit under it, in ONE statement: one database round trip. The insert's condition is
 * the success condition of `decideVisit`. A visit of a test click, or sent in test mode, is a test visit.
 */
export async function readFactsAndRecordVisit(
  db: Database,
  w: VisitWrite,
): Promise<VisitFacts & { recorded: boolean }> {
  const c = clickEvents;
  const o = alias(clickEvents, "o");
  const p = programs;
  const v = visitEvents;
  // The program id compares as bigint: any integer the body may carry compares without an out-of-range error.
  const result = await db.execute<VisitRow>(sql`
    with sent as (
      select coalesce(${c.visitorClickId}, ${c.clickId}) as click_id
      from ${c}
      where ${c.clickId} = ${w.clickId}
    ),
    click as (
      select ${o.clickId} as click_id, ${o.programId} as program_id, ${o.partnerId} as partner_id,
             ${o.isTest} as is_test, ${p.allowedOrigins} as allowed_origins
      from sent
      join ${c} ${o} on ${o.clickId} = sent.click_id
      join ${p} on ${p.id} = ${o.programId}
    ),
    recorded as (
      insert into ${v} (${columnName(v.clickId)}, ${columnName(v.programId)}, ${columnName(v.partnerId)},
                        ${columnName(v.url)}, ${columnName(v.referrer)}, ${columnName(v.isTest)},
                        ${columnName(v.createdAt)})
      select click.click_id, click.program_id, click.partner_id, ${w.url}, ${w.referrer}::text,
             click.is_test or ${w.testMode}::boolean, ${w.now.toISOString()}::timestamptz
      from click
      where ${w.programId}::bigint is null or click.program_id = ${w.programId}::bigint
      returning ${v.id}
    )
    select (select row_to_json(click) from click) as click, exists (select 1 from recorded) as recorded
  `);

  const row = result.rows[0];
  if (!row) throw new Error("visit statement returned no row");
  const click = row.click;
  return {
    click: click && {
      clickId: click.click_id,
      programId: click.program_id,
      partnerId: click.partner_id,
      isTest: click.is_test,
      allowedOrigins: click.allowed_origins,
    },
    recorded: row.recorded,
  };
}
