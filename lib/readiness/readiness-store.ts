import { sql } from "drizzle-orm";
import { alias } from "drizzle-orm/pg-core";
import { commissions, refunds } from "../../schema/commissions.ts";
import { clickEvents, leadEvents, saleEvents } from "../../schema/events.ts";
import { programPartners, referralLinks } from "../../schema/partners.ts";
import { type LeadAuthPolicy, programApiKeys, programs } from "../../schema/programs.ts";
import type { ApiKeyRecord } from "../auth/program-key.ts";
import type { Database } from "../db/client.ts";
import { fromDriver, fromDriverOrNull } from "../db/columns.ts";
import { keptPlanStatement } from "../db/kept-plan.ts";

/**
 * Each evidence count looks at the program's most recent `evidenceSampleSize` events of its kind, so the
 * readiness read costs the same at ten events and at ten million (an index walk from the newest row). A
 * verdict needs an event's existence and its time; a hundred of them is ample evidence, and at a thousand
 * the read of a busy program took twice the time of a young one's (seven thousand rows against a few
 * hundred), so the figure stops at a hundred and `count_is_lower_bound` says when it did.
 */
export const evidenceSampleSize = 100;

/** How many recent live events of one kind were seen (capped at the sample size) and the newest one's time. */
export interface EventSample {
  count: number;
  lastAt: Date | null;
}

export interface ReadinessFacts {
  programId: number;
  leadAuthPolicy: LeadAuthPolicy;
  allowedOrigins: string[];
  paymentsAccountConnected: boolean;
  liveKeys: { active: number; retiring: number; earliestRotateBy: Date | null };
  links: { active: number; activeWithPartner: number };
  clicks: EventSample & {
    fromAllowedOrigin: number;
    lastOrigin: string | null;
    lastOtherOrigin: string | null;
  };
  settledLeads: EventSample;
  provisionalLeads: EventSample;
  apiSales: EventSample;
  providerSales: EventSample;
  commissions: EventSample;
  refunds: EventSample;
  testEvents: EventSample;
  fraud: FraudFacts;
}

/** Flagged live rows among the same newest events the checks sample, and the program's fraud settings. */
export interface FraudFacts {
  flaggedLeads: number;
  flaggedSales: number;
  flaggedCommissions: number;
  /** Every signal code on those rows, sorted, each once. */
  codes: string[];
  holdFlaggedCommissions: boolean;
  /** The program's hold period: with 0 days a commission is approved with its sale, so none is held. */
  holdDays: number;
  emailAttributionSettledOnly: boolean;
}

export type ReadinessSubject = { programId: number } | { keyHash: string };

export interface ReadinessRead {
  /** The key the request authenticated with (only for a `keyHash` subject); null when it matches none. */
  key: (ApiKeyRecord & { keyPrefix: string }) | null;
  facts: ReadinessFacts | null;
}

type Sample = { count: number; last_at: string | null };
type FactsRow = {
  program_id: number;
  lead_auth_policy: LeadAuthPolicy;
  allowed_origins: string[];
  payments_account_connected: boolean;
  live_keys: { active: number; retiring: number; earliest_rotate_by: string | null };
  links: { active: number; active_with_partner: number };
  clicks: Sample & {
    from_allowed_origin: number;
    last_origin: string | null;
    last_other_origin: string | null;
  };
  settled_leads: Sample;
  provisional_leads: Sample;
  api_sales: Sample;
  provider_sales: Sample;
  commissions: Sample;
  refunds: Sample;
  test_events: Sample;
  fraud: {
    leads: number;
    sales: number;
    commissions: number;
    codes: string[];
    hold_flagged_commissions: boolean;
    hold_days: number;
    email_attribution_settled_only: boolean;
  };
};
type KeyRow = {
  program_id: number;
  is_test: boolean;
  key_prefix: string;
  rotation_marked_at: string | null;
  rotate_by: string | null;
};

/**
 * The JSON's times are `created_at`-like timestamptz values (an event's time, a key's rotation deadline),
 * read as the schema's timestamp columns read them; counts are JSON numbers already.
 */
const date = (value: string | null | undefined): Date | null =>
  fromDriverOrNull(clickEvents.createdAt, value);
const sample = (s: Sample): EventSample => ({ count: s.count, lastAt: date(s.last_at) });

/**
 * Every fact the readiness verdict needs, in ONE statement (the readiness budget is one round trip): the
 * key (when the subject is a key), the program's settings, keys and links, and a bounded sample of each
 * kind of recorded live event. Test events (test leads and sales sent with the program key: not the provider's
 * `livemode: false` payments, migration 0059) count only for the test-event check. Run as the PL/pgSQL
 * function `read_readiness_facts` (`keptPlanStatement`, migration 0032): planning this statement on every
 * request cost PostgreSQL more than running it.
 */
export const readinessFactsStatement = keptPlanStatement({
  functionName: "read_readiness_facts",
  names: ["keyHash", "programId", "at", "sampleSize"],
  parameterTypes: {
    keyHash: "text",
    programId: "integer",
    at: "timestamp with time zone",
    sampleSize: "integer",
  },
  returns: [
    ["key", "json"],
    ["facts", "json"],
  ],
  // It reads every key of the program, a table read whole: planned without sequential scans, PostgreSQL
  // picked a plan 400 times slower (lib/db/kept-plan.ts).
  indexLookupsOnly: false,
  build: (q) => {
    const keyHash = q.keyHash;
    const programId = q.programId;
    const at = q.at;
    const n = q.sampleSize;
    const k = programApiKeys;
    const p = programs;
    const l = alias(referralLinks, "l");
    const pp = alias(programPartners, "pp");
    const ck = clickEvents;
    const ld = leadEvents;
    const sa = saleEvents;
    const cm = commissions;
    const r = alias(refunds, "r");
    const s = alias(saleEvents, "s");
    const live = (table: typeof ck | typeof ld | typeof sa | typeof cm) =>
      sql`${table.programId} = (select id from program) and not ${table.isTest}`;
    // The CTEs' own column names (program_id, created_at, ...) are local to this statement; every table
    // column is named through the schema.
    // recent_refunds: by the refund's own program (set from its sale's at insert), newest first by
    // refunds_program_created_idx; a test sale's refunds are skipped by its primary key. 'fraud' is
    // informational: flags never change a check or the verdict.
    return sql`
    with key as (
      select ${k.programId} as program_id, ${k.isTest} as is_test, ${k.keyPrefix} as key_prefix,
             ${k.rotationMarkedAt} as rotation_marked_at, ${k.rotateBy} as rotate_by
      from ${k} where ${k.keyHash} = ${keyHash}::text and ${k.revokedAt} is null
    ),
    program as (
      select ${p.id} as id, ${p.leadAuthPolicy} as lead_auth_policy, ${p.allowedOrigins} as allowed_origins,
             ${p.stripeAccountId} as stripe_account_id,
             ${p.holdFlaggedCommissions} as hold_flagged_commissions, ${p.holdDays} as hold_days,
             ${p.emailAttributionSettledOnly} as email_attribution_settled_only
      from ${p}
      where ${p.id} = coalesce(${programId}::int, (select program_id from key))
    ),
    live_keys as (
      select count(*) filter (where ${k.rotateBy} is null) as active,
             count(*) filter (where ${k.rotateBy} is not null) as retiring,
             min(${k.rotateBy}) as earliest_rotate_by
      from ${k}
      where ${k.programId} = (select id from program) and not ${k.isTest} and ${k.revokedAt} is null
        and (${k.rotateBy} is null or ${k.rotateBy} > ${at}::timestamptz)
    ),
    links as (
      select count(*) filter (where ${l.isActive}) as active,
             count(*) filter (where ${l.isActive} and ${pp.status} = 'active') as active_with_partner
      from ${referralLinks} ${l}
      left join ${programPartners} ${pp} on ${pp.programId} = ${l.programId} and ${pp.partnerId} = ${l.partnerId}
      where ${l.programId} = (select id from program) and not ${l.testOnly}
    ),
    recent_clicks as (
      select ${ck.createdAt} as created_at, ${ck.landingOrigin} as landing_origin from ${ck}
      where ${live(ck)}
      order by ${ck.createdAt} desc limit ${n}::int
    ),
    clicks as (
      select count(*) as count, max(created_at) as last_at,
             count(*) filter (where landing_origin = any(program.allowed_origins)) as from_allowed_origin,
             (array_agg(landing_origin order by created_at desc))[1] as last_origin,
             (array_agg(landing_origin order by created_at desc)
                filter (where not coalesce(landing_origin = any(program.allowed_origins), false)))[1]
               as last_other_origin
      from recent_clicks cross join program
    ),
    recent_leads as (
      select ${ld.provisional} as provisional, ${ld.settledAt} as settled_at, ${ld.createdAt} as created_at,
             ${ld.fraudFlags} as fraud_flags from ${ld}
      where ${live(ld)}
      order by ${ld.createdAt} desc limit ${n}::int
    ),
    recent_sales as (
      select ${sa.source} as source, ${sa.createdAt} as created_at, ${sa.fraudFlags} as fraud_flags from ${sa}
      where ${live(sa)}
      order by ${sa.createdAt} desc limit ${n}::int
    ),
    recent_commissions as (
      select ${cm.createdAt} as created_at, ${cm.fraudFlags} as fraud_flags from ${cm}
      where ${live(cm)}
      order by ${cm.createdAt} desc limit ${n}::int
    ),
    recent_refunds as (
      select ${r.createdAt} as created_at from ${refunds} ${r}
      where ${r.programId} = (select id from program)
        and exists (select 1 from ${saleEvents} ${s} where ${s.id} = ${r.saleId} and not ${s.isTest})
      order by ${r.createdAt} desc limit ${n}::int
    ),
    recent_tests as (
      (select ${ld.createdAt} as created_at from ${ld}
       where ${ld.programId} = (select id from program) and ${ld.isTest} and ${ld.viaApiKey}
       order by ${ld.createdAt} desc limit ${n}::int)
      union all
      (select ${sa.createdAt} as created_at from ${sa}
       where ${sa.programId} = (select id from program) and ${sa.isTest} and ${sa.source} = 'api'
       order by ${sa.createdAt} desc limit ${n}::int)
    )
    select
      (select row_to_json(key) from key) as key,
      (select json_build_object(
        'program_id', program.id,
        'lead_auth_policy', program.lead_auth_policy,
        'allowed_origins', program.allowed_origins,
        'payments_account_connected', program.stripe_account_id is not null,
        'live_keys', (select row_to_json(live_keys) from live_keys),
        'links', (select row_to_json(links) from links),
        'clicks', (select row_to_json(clicks) from clicks),
        'settled_leads', (select json_build_object('count', count(*), 'last_at', max(coalesce(settled_at, created_at)))
                          from recent_leads where not provisional or settled_at is not null),
        'provisional_leads', (select json_build_object('count', count(*), 'last_at', max(created_at))
                              from recent_leads where provisional and settled_at is null),
        'api_sales', (select json_build_object('count', count(*), 'last_at', max(created_at))
                      from recent_sales where source = 'api'),
        'provider_sales', (select json_build_object('count', count(*), 'last_at', max(created_at))
                           from recent_sales where source <> 'api'),
        'commissions', (select json_build_object('count', count(*), 'last_at', max(created_at)) from recent_commissions),
        'refunds', (select json_build_object('count', count(*), 'last_at', max(created_at)) from recent_refunds),
        'test_events', (select json_build_object('count', least(count(*), ${n}::int), 'last_at', max(created_at))
                        from recent_tests),
        'fraud', json_build_object(
          'leads', (select count(*) from recent_leads where cardinality(fraud_flags) > 0),
          'sales', (select count(*) from recent_sales where cardinality(fraud_flags) > 0),
          'commissions', (select count(*) from recent_commissions where cardinality(fraud_flags) > 0),
          'codes', (select coalesce(json_agg(code order by code), '[]'::json) from (
                      select unnest(fraud_flags) as code from recent_leads
                      union select unnest(fraud_flags) from recent_sales
                      union select unnest(fraud_flags) from recent_commissions) seen),
          'hold_flagged_commissions', program.hold_flagged_commissions,
          'hold_days', program.hold_days,
          'email_attribution_settled_only', program.email_attribution_settled_only)
      ) from program) as facts
  `;
  },
});

/** The readiness facts of a key's program, or of a program named by id (the dashboard's). */
export async function readReadinessFacts(
  db: Database,
  subject: ReadinessSubject,
  now: Date,
): Promise<ReadinessRead> {
  const k = programApiKeys;
  const result = await db.execute<{ key: KeyRow | null; facts: FactsRow | null }>(
    readinessFactsStatement.call({
      keyHash: "keyHash" in subject ? subject.keyHash : null,
      programId: "programId" in subject ? subject.programId : null,
      at: now.toISOString(),
      sampleSize: evidenceSampleSize,
    }),
  );
  const row = result.rows[0];
  const key = row?.key ?? null;
  const f = row?.facts ?? null;
  return {
    key: key && {
      programId: fromDriver(k.programId, key.program_id),
      isTest: key.is_test,
      keyPrefix: key.key_prefix,
      rotationMarkedAt: fromDriverOrNull(k.rotationMarkedAt, key.rotation_marked_at),
      rotateBy: fromDriverOrNull(k.rotateBy, key.rotate_by),
    },
    facts: f && {
      programId: fromDriver(programs.id, f.program_id),
      leadAuthPolicy: f.lead_auth_policy,
      allowedOrigins: f.allowed_origins,
      paymentsAccountConnected: f.payments_account_connected,
      liveKeys: {
        active: f.live_keys.active,
        retiring: f.live_keys.retiring,
        earliestRotateBy: fromDriverOrNull(programApiKeys.rotateBy, f.live_keys.earliest_rotate_by),
      },
      links: { active: f.links.active, activeWithPartner: f.links.active_with_partner },
      clicks: {
        ...sample(f.clicks),
        fromAllowedOrigin: f.clicks.from_allowed_origin,
        lastOrigin: f.clicks.last_origin,
        lastOtherOrigin: f.clicks.last_other_origin,
      },
      settledLeads: sample(f.settled_leads),
      provisionalLeads: sample(f.provisional_leads),
      apiSales: sample(f.api_sales),
      providerSales: sample(f.provider_sales),
      commissions: sample(f.commissions),
      refunds: sample(f.refunds),
      testEvents: sample(f.test_events),
      fraud: {
        flaggedLeads: Number(f.fraud.leads),
        flaggedSales: Number(f.fraud.sales),
        flaggedCommissions: Number(f.fraud.commissions),
        codes: f.fraud.codes.map(String),
        holdFlaggedCommissions: f.fraud.hold_flagged_commissions,
        holdDays: f.fraud.hold_days,
        emailAttributionSettledOnly: f.fraud.email_attribution_settled_only,
      },
    },
  };
}
