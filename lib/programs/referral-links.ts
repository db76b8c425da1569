import { sql } from "drizzle-orm";
import { alias } from "drizzle-orm/pg-core";
import { auditLog } from "../../schema/accounts.ts";
import {
  partners,
  programPartners,
  referralLinkShortLinkUniqueIndex,
  referralLinks,
} from "../../schema/partners.ts";
import { programs } from "../../schema/programs.ts";
import { requireProgramMembership } from "../auth/require-program-membership.ts";
import type { Database } from "../db/client.ts";
import { columnList, columnName, fromDriver, fromDriverOrNull } from "../db/columns.ts";
import { isUniqueViolation } from "../db/errors.ts";
import { linkDisabledWebhookColumn } from "../webhooks/outbox-statements.ts";
import { checkLinkState, checkNewLink, checkPartner, generateShortLink } from "./decide-partner-link.ts";

/**
 * The partner and referral link operations of a program, for a signed-in member of its workspace. Each
 * checks the membership, then the body (pure), then writes in one statement with its audit entry.
 */
export type Refusal =
  | { ok: false; reason: "no_access" }
  | { ok: false; reason: "invalid"; field: string; message: string }
  | { ok: false; reason: "short_link_taken" }
  | { ok: false; reason: "link_not_found" };

export type LinkRow = {
  id: number;
  short_link: string;
  partner_id: number | null;
  partner_name: string | null;
  active: boolean;
  disabled_at: string | null;
  created_at: string;
};

const p = programs;
const a = auditLog;
const pp = programPartners;
/** A link, as the table aliased `l` or as a CTE `l` holding the table's own columns (`returning *`). */
const l = alias(referralLinks, "l");
const pa = alias(partners, "pa");
const auditColumns = columnList(a.advertiserId, a.programId, a.actorUserId, a.action, a.changes, a.createdAt);

interface Actor {
  userId: number;
  programId: number | undefined;
  now: Date;
}

async function access(db: Database, actor: Actor): Promise<{ programId: number } | Refusal> {
  const membership = await requireProgramMembership(db, actor.userId, actor.programId);
  if (!membership.ok || actor.programId === undefined) return { ok: false, reason: "no_access" };
  return { programId: actor.programId };
}

/**
 * Adds a partner to the program: a new partner, or the existing one with that email (partners may promote
 * several programs; their name stays theirs). Re-adding a removed partner makes them active again.
 */
export async function addPartner(
  db: Database,
  actor: Actor,
  body: Record<string, unknown>,
): Promise<{ ok: true; partner: { id: number; name: string; email: string; status: string } } | Refusal> {
  const allowed = await access(db, actor);
  if ("ok" in allowed) return allowed;
  const checked = checkPartner(body);
  if (!checked.ok) return { ok: false, reason: "invalid", field: checked.field, message: checked.message };
  const at = actor.now.toISOString();
  const result = await db.execute<{ id: number; name: string; email: string; status: string }>(sql`
    with partner as (
      insert into ${partners} (${columnList(partners.name, partners.email)})
      values (${checked.value.name}, ${checked.value.email})
      on conflict ((lower(${columnName(partners.email)}))) do update set ${columnName(partners.email)} = ${partners.email}
      returning ${partners.id} as id, ${partners.name} as name, ${partners.email} as email
    ), membership as (
      insert into ${pp} (${columnList(pp.programId, pp.partnerId, pp.status)})
      select ${allowed.programId}, partner.id, 'active' from partner
      on conflict (${columnList(pp.programId, pp.partnerId)}) do update set ${columnName(pp.status)} = 'active'
      returning ${pp.partnerId} as partner_id, ${pp.status} as status
    ), audit as (
      insert into ${a} (${auditColumns})
      select ${p.advertiserId}, ${p.id}, ${actor.userId}, 'program.partner_added',
             jsonb_build_object('partner_id', jsonb_build_object('from', null, 'to', partner.id)), ${at}::timestamptz
      from ${p}, partner where ${p.id} = ${allowed.programId}
    )
    select partner.id, partner.name, partner.email, membership.status
    from partner join membership on membership.partner_id = partner.id`);
  const row = result.rows[0];
  if (!row) throw new Error("partner insert returned no row");
  return {
    ok: true,
    partner: { id: fromDriver(partners.id, row.id), name: row.name, email: row.email, status: row.status },
  };
}

const linkColumns = sql`${l.id} as id, ${l.shortLink} as short_link, ${l.partnerId} as partner_id,
  ${pa.name} as partner_name, ${l.isActive} as active, ${l.disabledAt} as disabled_at, ${l.createdAt} as created_at`;

function linkOf(row: LinkRow): LinkRow {
  return {
    id: fromDriver(l.id, row.id),
    short_link: row.short_link,
    partner_id: fromDriverOrNull(l.partnerId, row.partner_id),
    partner_name: row.partner_name,
    active: row.active,
    disabled_at: fromDriverOrNull(l.disabledAt, row.disabled_at)?.toISOString() ?? null,
    created_at: fromDriver(l.createdAt, row.created_at).toISOString(),
  };
}

/** A new active link for an active partner of the program. */
export async function createReferralLink(
  db: Database,
  actor: Actor,
  body: Record<string, unknown>,
): Promise<{ ok: true; link: LinkRow } | Refusal> {
  const allowed = await access(db, actor);
  if ("ok" in allowed) return allowed;
  const checked = checkNewLink(body);
  if (!checked.ok) return { ok: false, reason: "invalid", field: checked.field, message: checked.message };
  const { partnerId } = checked.value;
  const at = actor.now.toISOString();
  // A generated code that happens to be taken is drawn again; a chosen one is the caller's to change.
  for (let attempt = 0; ; attempt++) {
    const shortLink = checked.value.shortLink ?? generateShortLink();
    try {
      const result = await db.execute<LinkRow>(sql`
        with l as (
          insert into ${referralLinks} (${columnList(referralLinks.programId, referralLinks.partnerId, referralLinks.shortLink, referralLinks.createdAt)})
          select ${allowed.programId}, ${partnerId}, ${shortLink}, ${at}::timestamptz
          where exists (select 1 from ${pp}
                        where ${pp.programId} = ${allowed.programId} and ${pp.partnerId} = ${partnerId} and ${pp.status} = 'active')
          returning *
        ), audit as (
          insert into ${a} (${auditColumns})
          select ${p.advertiserId}, ${p.id}, ${actor.userId}, 'program.link_created',
                 jsonb_build_object('short_link', jsonb_build_object('from', null, 'to', ${l.shortLink})), ${at}::timestamptz
          from ${p}, l where ${p.id} = ${allowed.programId}
        )
        select ${linkColumns} from l left join ${partners} ${pa} on ${pa.id} = ${l.partnerId}`);
      const row = result.rows[0];
      if (!row)
        return {
          ok: false,
          reason: "invalid",
          field: "partner_id",
          message: "partner_id must be an active partner of this program",
        };
      return { ok: true, link: linkOf(row) };
    } catch (error) {
      if (!isUniqueViolation(error, referralLinkShortLinkUniqueIndex)) throw error;
      if (checked.value.shortLink !== null || attempt >= 3) return { ok: false, reason: "short_link_taken" };
    }
  }
}

/** Every link of the program with its state, oldest first (at most 1000). */
export async function listReferralLinks(
  db: Database,
  actor: Actor,
): Promise<{ ok: true; links: LinkRow[] } | Refusal> {
  const allowed = await access(db, actor);
  if ("ok" in allowed) return allowed;
  const result = await db.execute<LinkRow>(sql`
    select ${linkColumns} from ${referralLinks} ${l} left join ${partners} ${pa} on ${pa.id} = ${l.partnerId}
    where ${l.programId} = ${allowed.programId} order by ${l.id} limit 1000`);
  return { ok: true, links: result.rows.map(linkOf) };
}

/**
 * Turns a link off (the click endpoint then answers 410 `link_disabled` and records nothing) or on again.
 * Idempotent: setting the state it already has changes nothing and records no audit entry.
 */
export async function setReferralLinkActive(
  db: Database,
  actor: Actor & { linkId: number | undefined },
  body: Record<string, unknown>,
): Promise<{ ok: true; link: LinkRow } | Refusal> {
  const allowed = await access(db, actor);
  if ("ok" in allowed) return allowed;
  const checked = checkLinkState(body);
  if (!checked.ok) return { ok: false, reason: "invalid", field: checked.field, message: checked.message };
  if (actor.linkId === undefined) return { ok: false, reason: "link_not_found" };
  const active = checked.value;
  const at = actor.now.toISOString();
  const r = referralLinks;
  const result = await db.execute<LinkRow>(sql`
    with before as (
      select ${r.id} as id, ${r.isActive} as is_active from ${r}
      where ${r.id} = ${actor.linkId} and ${r.programId} = ${allowed.programId}
      for update
    ), l as (
      update ${r} set
        ${columnName(r.isActive)} = ${active},
        ${columnName(r.disabledAt)} = case when ${active} then null else coalesce(${r.disabledAt}, ${at}::timestamptz) end
      from before where ${r.id} = before.id
      returning ${r}.*, before.is_active as was_active
    ), audit as (
      insert into ${a} (${auditColumns})
      select ${p.advertiserId}, ${p.id}, ${actor.userId}, 'program.link_state_changed',
             jsonb_build_object('active', jsonb_build_object('from', l.was_active, 'to', ${l.isActive}),
                                'short_link', jsonb_build_object('from', ${l.shortLink}, 'to', ${l.shortLink})),
             ${at}::timestamptz
      from ${p}, l where ${p.id} = ${allowed.programId} and l.was_active <> ${l.isActive}
    )
    select ${linkColumns}, ${linkDisabledWebhookColumn(at)} from l left join ${partners} ${pa} on ${pa.id} = ${l.partnerId}`);
  const row = result.rows[0];
  if (!row) return { ok: false, reason: "link_not_found" };
  return { ok: true, link: linkOf(row) };
}
