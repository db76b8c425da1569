import { sql } from "drizzle-orm";
import { requireProgramMembership } from "../auth/require-program-membership.ts";
import type { Database } from "../db/client.ts";
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
      insert into partners (name, email) values (${checked.value.name}, ${checked.value.email})
      on conflict ((lower(email))) do update set email = partners.email
      returning id, name, email
    ), membership as (
      insert into program_partners (program_id, partner_id, status)
      select ${allowed.programId}, partner.id, 'active' from partner
      on conflict (program_id, partner_id) do update set status = 'active'
      returning partner_id, status
    ), audit as (
      insert into audit_log (advertiser_id, program_id, actor_user_id, action, changes, created_at)
      select p.advertiser_id, p.id, ${actor.userId}, 'program.partner_added',
             jsonb_build_object('partner_id', jsonb_build_object('from', null, 'to', partner.id)), ${at}::timestamptz
      from programs p, partner where p.id = ${allowed.programId}
    )
    select partner.id, partner.name, partner.email, membership.status
    from partner join membership on membership.partner_id = partner.id`);
  const row = result.rows[0];
  if (!row) throw new Error("partner insert returned no row");
  return { ok: true, partner: { id: Number(row.id), name: row.name, email: row.email, status: row.status } };
}

const linkColumns = sql`l.id, l.short_link, l.partner_id, pa.name as partner_name, l.is_active as active,
  l.disabled_at, l.created_at`;

function linkOf(row: LinkRow): LinkRow {
  return {
    id: Number(row.id),
    short_link: row.short_link,
    partner_id: row.partner_id === null ? null : Number(row.partner_id),
    partner_name: row.partner_name,
    active: row.active,
    disabled_at: row.disabled_at ? new Date(row.disabled_at).toISOString() : null,
    created_at: new Date(row.created_at).toISOString(),
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
          insert into referral_links (program_id, partner_id, short_link, created_at)
          select ${allowed.programId}, ${partnerId}, ${shortLink}, ${at}::timestamptz
          where exists (select 1 from program_partners
                        where program_id = ${allowed.programId} and partner_id = ${partnerId} and status = 'active')
          returning *
        ), audit as (
          insert into audit_log (advertiser_id, program_id, actor_user_id, action, changes, created_at)
          select p.advertiser_id, p.id, ${actor.userId}, 'program.link_created',
                 jsonb_build_object('short_link', jsonb_build_object('from', null, 'to', l.short_link)), ${at}::timestamptz
          from programs p, l where p.id = ${allowed.programId}
        )
        select ${linkColumns} from l left join partners pa on pa.id = l.partner_id`);
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
      if (!isUniqueViolation(error, "referral_links_short_link_unique")) throw error;
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
    select ${linkColumns} from referral_links l left join partners pa on pa.id = l.partner_id
    where l.program_id = ${allowed.programId} order by l.id limit 1000`);
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
  const result = await db.execute<LinkRow>(sql`
    with before as (
      select id, is_active from referral_links
      where id = ${actor.linkId} and program_id = ${allowed.programId}
      for update
    ), l as (
      update referral_links r set
        is_active = ${active},
        disabled_at = case when ${active} then null else coalesce(r.disabled_at, ${at}::timestamptz) end
      from before where r.id = before.id
      returning r.*, before.is_active as was_active
    ), audit as (
      insert into audit_log (advertiser_id, program_id, actor_user_id, action, changes, created_at)
      select p.advertiser_id, p.id, ${actor.userId}, 'program.link_state_changed',
             jsonb_build_object('active', jsonb_build_object('from', l.was_active, 'to', l.is_active),
                                'short_link', jsonb_build_object('from', l.short_link, 'to', l.short_link)),
             ${at}::timestamptz
      from programs p, l where p.id = ${allowed.programId} and l.was_active <> l.is_active
    )
    select ${linkColumns}, ${linkDisabledWebhookColumn(at)} from l left join partners pa on pa.id = l.partner_id`);
  const row = result.rows[0];
  if (!row) return { ok: false, reason: "link_not_found" };
  return { ok: true, link: linkOf(row) };
}
