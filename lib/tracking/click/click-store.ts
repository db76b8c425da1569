import { sql } from "drizzle-orm";
import { alias } from "drizzle-orm/pg-core";
import { clickEvents } from "../../../schema/events.ts";
import { referralLinks } from "../../../schema/partners.ts";
import { programApiKeys, programs } from "../../../schema/programs.ts";
import type { Database } from "../../db/client.ts";
import { columnName } from "../../db/columns.ts";
import type { DeviceHashes } from "../../fraud/device-hash.ts";
import type { ClickFacts } from "./decide-click.ts";

export interface ClickWrite {
  code: string;
  requestedProgramId: number | null;
  eventProgramId: number | null;
  keyHash: string | null;
  visitorClickId: string | null;
  testMode: boolean;
  newClickId: string;
  affiliateUrl: string;
  referrer: string | null;
  userAgent: string | null;
  /** Keyed hashes of the visitor's address and user agent (fraud signals). */
  device: DeviceHashes;
  now: Date;
}

type ClickRow = {
  link: {
    id: number;
    program_id: number | null;
    partner_id: number | null;
    is_active: boolean;
    program_exists: boolean;
    attribution_window_days: number | null;
    allowed_origins: string[] | null;
  } | null;
  requested_program_exists: boolean | null;
  key_program_id: number | null;
  retained_click_id: string | null;
  recorded: boolean;
};

/**
 * Reads every fact the click rules need and records the click, in ONE statement (the click budget is one
 * database round trip). The insert's condition is the success condition of `decideClick`: a refused
 * click writes nothing.
 */
export async function readFactsAndRecordClick(
  db: Database,
  w: ClickWrite,
): Promise<ClickFacts & { recorded: boolean }> {
  const checkKeyProgram = w.testMode && w.keyHash !== null && w.eventProgramId !== null;
  const now = w.now.toISOString();
  const l = alias(referralLinks, "l");
  const p = alias(programs, "p");
  const k = programApiKeys;
  const c = clickEvents;
  const v = alias(clickEvents, "v");
  const result = await db.execute<ClickRow>(sql`
    with link as (
      select ${l.id} as id, ${l.programId} as program_id, ${l.partnerId} as partner_id, ${l.isActive} as is_active,
             ${p.id} is not null as program_exists, ${p.attributionWindowDays} as attribution_window_days,
             ${p.allowedOrigins} as allowed_origins
      from ${referralLinks} ${l}
      left join ${programs} ${p} on ${p.id} = ${l.programId}
      where ${l.shortLink} = ${w.code}
    ),
    api_key as (
      select ${k.programId} as program_id from ${k}
      where ${k.keyHash} = ${w.keyHash}::text and ${k.revokedAt} is null
        and (${k.rotateBy} is null or ${k.rotateBy} > ${now}::timestamptz)
    ),
    retained as (
      select ${v.clickId} as click_id
      from ${c} ${v}
      join link on ${v.programId} = link.program_id
      where ${v.clickId} = ${w.visitorClickId}::text
        and ${v.isTest} = ${w.testMode}::boolean
        and ${v.createdAt} > ${now}::timestamptz - make_interval(days => link.attribution_window_days)
    ),
    recorded as (
      insert into ${c}
        (${columnName(c.clickId)}, ${columnName(c.programId)}, ${columnName(c.partnerId)}, ${columnName(c.linkId)},
         ${columnName(c.visitorClickId)}, ${columnName(c.affiliateUrl)}, ${columnName(c.referrer)},
         ${columnName(c.userAgent)}, ${columnName(c.ipHash)}, ${columnName(c.uaHash)}, ${columnName(c.isTest)},
         ${columnName(c.createdAt)})
      select ${w.newClickId}, link.program_id, link.partner_id, link.id, (select click_id from retained),
             ${w.affiliateUrl}, ${w.referrer}::text, ${w.userAgent}::text, ${w.device.ipHash}::text,
             ${w.device.uaHash}::text, ${w.testMode}::boolean, ${now}::timestamptz
      from link
      where link.is_active
        and link.partner_id is not null
        and link.program_exists
        and (${w.requestedProgramId}::int is null or link.program_id = ${w.requestedProgramId}::int)
        and (not ${checkKeyProgram}::boolean
             or not exists (select 1 from api_key where program_id <> ${w.eventProgramId}::int))
      returning ${c.clickId}
    )
    select
      (select row_to_json(link) from link) as link,
      case when ${w.requestedProgramId}::int is null then null
           else exists (select 1 from ${programs} where ${programs.id} = ${w.requestedProgramId}::int) end
        as requested_program_exists,
      (select program_id from api_key) as key_program_id,
      (select click_id from retained) as retained_click_id,
      exists (select 1 from recorded) as recorded
  `);

  const row = result.rows[0];
  if (!row) throw new Error("click statement returned no row");
  const link = row.link;
  return {
    link: link && {
      id: link.id,
      programId: link.program_id,
      partnerId: link.partner_id,
      isActive: link.is_active,
      programExists: link.program_exists,
      attributionWindowDays: link.attribution_window_days,
      allowedOrigins: link.allowed_origins,
    },
    requestedProgramExists: row.requested_program_exists,
    keyProgramId: row.key_program_id,
    retainedClickId: row.retained_click_id,
    recorded: row.recorded,
  };
}
