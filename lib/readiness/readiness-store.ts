import { sql } from "drizzle-orm";
import type { LeadAuthPolicy } from "../../schema/programs.ts";
import type { ApiKeyRecord } from "../auth/program-key.ts";
import type { Database } from "../db/client.ts";

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

const date = (value: string | null | undefined): Date | null => (value ? new Date(value) : null);
const sample = (s: Sample): EventSample => ({ count: Number(s.count), lastAt: date(s.last_at) });

/**
 * Every fact the readiness verdict needs, in ONE statement (the readiness budget is one round trip): the
 * key (when the subject is a key), the program's settings, keys and links, and a bounded sample of each
 * kind of recorded live event. Test events count only for the test-event check.
 */
export async function readReadinessFacts(
  db: Database,
  subject: ReadinessSubject,
  now: Date,
): Promise<ReadinessRead> {
  const keyHash = "keyHash" in subject ? subject.keyHash : null;
  const programId = "programId" in subject ? subject.programId : null;
  const at = now.toISOString();
  const n = evidenceSampleSize;
  const result = await db.execute<{ key: KeyRow | null; facts: FactsRow | null }>(sql`
    with key as (
      select program_id, is_test, key_prefix, rotation_marked_at, rotate_by
      from program_api_keys where key_hash = ${keyHash}::text and revoked_at is null
    ),
    program as (
      select id, lead_auth_policy, allowed_origins, stripe_account_id, hold_flagged_commissions,
             email_attribution_settled_only
      from programs
      where id = coalesce(${programId}::int, (select program_id from key))
    ),
    live_keys as (
      select count(*) filter (where rotate_by is null) as active,
             count(*) filter (where rotate_by is not null) as retiring,
             min(rotate_by) as earliest_rotate_by
      from program_api_keys
      where program_id = (select id from program) and not is_test and revoked_at is null
        and (rotate_by is null or rotate_by > ${at}::timestamptz)
    ),
    links as (
      select count(*) filter (where l.is_active) as active,
             count(*) filter (where l.is_active and pp.status = 'active') as active_with_partner
      from referral_links l
      left join program_partners pp on pp.program_id = l.program_id and pp.partner_id = l.partner_id
      where l.program_id = (select id from program)
    ),
    recent_clicks as (
      select created_at, landing_origin from affiliate_click_events
      where program_id = (select id from program) and not is_test
      order by created_at desc limit ${n}::int
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
      select provisional, settled_at, created_at, fraud_flags from affiliate_lead_events
      where program_id = (select id from program) and not is_test
      order by created_at desc limit ${n}::int
    ),
    recent_sales as (
      select source, created_at, fraud_flags from affiliate_sale_events
      where program_id = (select id from program) and not is_test
      order by created_at desc limit ${n}::int
    ),
    recent_commissions as (
      select created_at, fraud_flags from commissions
      where program_id = (select id from program) and not is_test
      order by created_at desc limit ${n}::int
    ),
    recent_refunds as (
      -- By the refund's own program (set from its sale's at insert), newest first by
      -- refunds_program_created_idx; a test sale's refunds are skipped by its primary key.
      select r.created_at from refunds r
      where r.program_id = (select id from program)
        and exists (select 1 from affiliate_sale_events s where s.id = r.sale_id and not s.is_test)
      order by r.created_at desc limit ${n}::int
    ),
    recent_tests as (
      (select created_at from affiliate_lead_events
       where program_id = (select id from program) and is_test and via_api_key
       order by created_at desc limit ${n}::int)
      union all
      (select created_at from affiliate_sale_events
       where program_id = (select id from program) and is_test
       order by created_at desc limit ${n}::int)
    )
    select
      (select row_to_json(key) from key) as key,
      (select json_build_object(
        'program_id', p.id,
        'lead_auth_policy', p.lead_auth_policy,
        'allowed_origins', p.allowed_origins,
        'payments_account_connected', p.stripe_account_id is not null,
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
        -- Informational: flags never change a check or the verdict.
        'fraud', json_build_object(
          'leads', (select count(*) from recent_leads where cardinality(fraud_flags) > 0),
          'sales', (select count(*) from recent_sales where cardinality(fraud_flags) > 0),
          'commissions', (select count(*) from recent_commissions where cardinality(fraud_flags) > 0),
          'codes', (select coalesce(json_agg(code order by code), '[]'::json) from (
                      select unnest(fraud_flags) as code from recent_leads
                      union select unnest(fraud_flags) from recent_sales
                      union select unnest(fraud_flags) from recent_commissions) seen),
          'hold_flagged_commissions', p.hold_flagged_commissions,
          'email_attribution_settled_only', p.email_attribution_settled_only)
      ) from program p) as facts
  `);
  const row = result.rows[0];
  const k = row?.key ?? null;
  const f = row?.facts ?? null;
  return {
    key: k && {
      programId: Number(k.program_id),
      isTest: k.is_test,
      keyPrefix: k.key_prefix,
      rotationMarkedAt: date(k.rotation_marked_at),
      rotateBy: date(k.rotate_by),
    },
    facts: f && {
      programId: Number(f.program_id),
      leadAuthPolicy: f.lead_auth_policy,
      allowedOrigins: f.allowed_origins,
      paymentsAccountConnected: f.payments_account_connected,
      liveKeys: {
        active: Number(f.live_keys.active),
        retiring: Number(f.live_keys.retiring),
        earliestRotateBy: date(f.live_keys.earliest_rotate_by),
      },
      links: { active: Number(f.links.active), activeWithPartner: Number(f.links.active_with_partner) },
      clicks: {
        ...sample(f.clicks),
        fromAllowedOrigin: Number(f.clicks.from_allowed_origin),
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
        emailAttributionSettledOnly: f.fraud.email_attribution_settled_only,
      },
    },
  };
}
