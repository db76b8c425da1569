import { sql } from "drizzle-orm";
import { alias } from "drizzle-orm/pg-core";
import { clickEvents } from "../../../schema/events.ts";
import { referralLinks } from "../../../schema/partners.ts";
import { programApiKeys, programs } from "../../../schema/programs.ts";
import { type ClickDimensions, clickDimensions } from "../../analytics/click-dimensions.ts";
import type { Database } from "../../db/client.ts";
import { columnList, columnName } from "../../db/columns.ts";
import { groupCommittedStatement, type Sending } from "../../db/group-committed-statement.ts";
import { keptPlanStatement } from "../../db/kept-plan.ts";
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
    test_only: boolean;
    program_exists: boolean;
    attribution_window_days: number | null;
    allowed_origins: string[] | null;
  } | null;
  requested_program_exists: boolean | null;
  key_program_id: number | null;
  retained_click_id: string | null;
  recorded: boolean;
};

/** The click's analytics dimensions, derived by the worker (`lib/analytics/click-dimensions.ts`). */
const DIMENSIONS = [
  "referrerDomain",
  "utmSource",
  "utmMedium",
  "utmCampaign",
  "landingPage",
  "landingOrigin",
] as const satisfies readonly (keyof ClickDimensions)[];

/**
 * The click's one statement, run as the PL/pgSQL function `record_click_with_dimensions` (`keptPlanStatement`,
 * migrations 0026 and 0042), so that PostgreSQL parses and plans it once per connection instead of on every click: the click's
 * CPU in the database, sent as text, was mostly parse and plan (`npm run bench` prints it per process).
 * The id it retains is the visitor's first click (the sent click's own `visitor_click_id` when it has one, so a
 * later partner's click id sent back still names the first partner's; 0054), within the window counted from it.
 */
export const clickStatement = keptPlanStatement({
  functionName: "record_click_with_dimensions",
  names: [
    "code",
    "keyHash",
    "now",
    "visitorClickId",
    "testMode",
    "newClickId",
    "affiliateUrl",
    "referrer",
    "userAgent",
    "ipHash",
    "uaHash",
    "requestedProgramId",
    "checkKeyProgram",
    "eventProgramId",
    ...DIMENSIONS,
  ],
  parameterTypes: {
    code: "text",
    keyHash: "text",
    now: "timestamp with time zone",
    visitorClickId: "text",
    testMode: "boolean",
    newClickId: "text",
    affiliateUrl: "text",
    referrer: "text",
    userAgent: "text",
    ipHash: "text",
    uaHash: "text",
    requestedProgramId: "integer",
    checkKeyProgram: "boolean",
    eventProgramId: "integer",
    referrerDomain: "text",
    utmSource: "text",
    utmMedium: "text",
    utmCampaign: "text",
    landingPage: "text",
    landingOrigin: "text",
  },
  returns: [
    ["link", "json"],
    ["requested_program_exists", "boolean"],
    ["key_program_id", "integer"],
    ["retained_click_id", "text"],
    ["recorded", "boolean"],
  ],
  build: (q) => {
    const l = alias(referralLinks, "l");
    const p = alias(programs, "p");
    const k = programApiKeys;
    const c = clickEvents;
    const v = alias(clickEvents, "v");
    const r = alias(clickEvents, "r");
    return sql`
    with link as (
      select ${l.id} as id, ${l.programId} as program_id, ${l.partnerId} as partner_id, ${l.isActive} as is_active,
             ${l.testOnly} as test_only, ${p.id} is not null as program_exists, ${p.attributionWindowDays} as attribution_window_days,
             ${p.allowedOrigins} as allowed_origins
      from ${referralLinks} ${l}
      left join ${programs} ${p} on ${p.id} = ${l.programId}
      where ${l.shortLink} = ${q.code}
    ),
    api_key as (
      select ${k.programId} as program_id from ${k}
      where ${k.keyHash} = ${q.keyHash}::text and ${k.revokedAt} is null
        and (${k.rotateBy} is null or ${k.rotateBy} > ${q.now}::timestamptz)
    ),
    retained as (
      select ${r.clickId} as click_id
      from ${c} ${v}
      join link on ${v.programId} = link.program_id
      join ${c} ${r} on ${r.clickId} = coalesce(${v.visitorClickId}, ${v.clickId})
      where ${v.clickId} = ${q.visitorClickId}::text
        and ${v.isTest} = ${q.testMode}::boolean
        and ${r.createdAt} > ${q.now}::timestamptz - make_interval(days => link.attribution_window_days)
    ),
    recorded as (
      insert into ${c}
        (${columnName(c.clickId)}, ${columnName(c.programId)}, ${columnName(c.partnerId)}, ${columnName(c.linkId)},
         ${columnName(c.visitorClickId)}, ${columnName(c.affiliateUrl)}, ${columnName(c.referrer)},
         ${columnName(c.userAgent)}, ${columnName(c.ipHash)}, ${columnName(c.uaHash)}, ${columnName(c.isTest)},
         ${columnName(c.createdAt)}, ${columnList(c.referrerDomain, c.utmSource, c.utmMedium, c.utmCampaign, c.landingPage, c.landingOrigin)})
      select ${q.newClickId}, link.program_id, link.partner_id, link.id, (select click_id from retained),
             ${q.affiliateUrl}, ${q.referrer}::text, ${q.userAgent}::text, ${q.ipHash}::text,
             ${q.uaHash}::text, ${q.testMode}::boolean, ${q.now}::timestamptz,
             ${q.referrerDomain}::text, ${q.utmSource}::text, ${q.utmMedium}::text, ${q.utmCampaign}::text,
             ${q.landingPage}::text, ${q.landingOrigin}::text
      from link
      where link.is_active
        and (${q.testMode}::boolean or not link.test_only)
        and link.partner_id is not null
        and link.program_exists
        and (${q.requestedProgramId}::int is null or link.program_id = ${q.requestedProgramId}::int)
        and (not ${q.checkKeyProgram}::boolean
             or not exists (select 1 from api_key where program_id <> ${q.eventProgramId}::int))
      returning ${c.clickId}
    )
    select
      (select row_to_json(link) from link) as link,
      case when ${q.requestedProgramId}::int is null then null
           else exists (select 1 from ${programs} where ${programs.id} = ${q.requestedProgramId}::int) end
        as requested_program_exists,
      (select program_id from api_key) as key_program_id,
      (select click_id from retained) as retained_click_id,
      exists (select 1 from recorded) as recorded
  `;
  },
});

/**
 * The click's statement through the isolate's group commit: the clicks that arrive while one is on its way to
 * the database go together as one call of `record_clicks` (migration 0044).
 */
export const clickStatementSent = groupCommittedStatement<typeof clickStatement.names, ClickRow>({
  functionName: "record_clicks",
  statement: clickStatement,
  what: "click statement",
});

/**
 * Reads every fact the click rules need and records the click, in ONE statement (the click budget is one
 * database round trip), which may be shared with other clicks of the isolate arriving at the same time
 * (`lib/db/group-commit.ts`: answered only once committed, as before). The insert's condition is the success
 * condition of `decideClick`: a refused click writes nothing.
 */
export async function readFactsAndRecordClick(
  db: Database,
  w: ClickWrite,
  sending?: Sending,
): Promise<ClickFacts & { recorded: boolean }> {
  const row = await clickStatementSent.send(
    db,
    {
      code: w.code,
      keyHash: w.keyHash,
      now: w.now.toISOString(),
      visitorClickId: w.visitorClickId,
      testMode: w.testMode,
      newClickId: w.newClickId,
      affiliateUrl: w.affiliateUrl,
      referrer: w.referrer,
      userAgent: w.userAgent,
      ipHash: w.device.ipHash,
      uaHash: w.device.uaHash,
      requestedProgramId: w.requestedProgramId,
      checkKeyProgram: w.testMode && w.keyHash !== null && w.eventProgramId !== null,
      eventProgramId: w.eventProgramId,
      ...clickDimensions(w.affiliateUrl, w.referrer),
    },
    sending,
  );
  const link = row.link;
  return {
    link: link && {
      id: link.id,
      programId: link.program_id,
      partnerId: link.partner_id,
      isActive: link.is_active,
      testOnly: link.test_only,
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
