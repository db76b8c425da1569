import { type SQL, sql } from "drizzle-orm";
import type { webhookDeliveryStatuses } from "../../schema/webhooks.ts";
import { requireProgramMembership } from "../auth/require-program-membership.ts";
import type { Database } from "../db/client.ts";
import { checkEndpointBody, checkOverlapHours, type EndpointChange } from "./endpoint-rules.ts";
import { testEventType } from "./event-types.ts";
import { sealSecret } from "./secret-box.ts";
import { generateWebhookSecret } from "./sign.ts";

/**
 * The webhook endpoint operations of a program, for an owner or admin of its workspace (settings family):
 * each checks the membership and role, then the body (pure), then writes in one transaction with its audit
 * entry. Secrets are shown only in the answers that create them (create, rotate), and a new one is never
 * stored unsealed on a deployed worker: without WEBHOOK_SECRET_KEY, create and rotate are refused.
 */
export interface Actor {
  userId: number;
  programId: number | undefined;
  now: Date;
  secretKey: string | undefined;
  /** `WEBHOOK_SECRETS_UNSEALED=allow` (local stack, tests): a new secret may be stored unsealed. */
  unsealedAllowed: boolean;
}

export type Refusal =
  | { ok: false; reason: "no_access" | "not_manager" | "endpoint_not_found" | "secret_key_missing" }
  | { ok: false; reason: "invalid"; message: string };

export interface EndpointView {
  id: number;
  url: string;
  description: string | null;
  events: string[];
  enabled: boolean;
  disabled_reason: string | null;
  disabled_at: string | null;
  failing_since: string | null;
  previous_secret_expires_at: string | null;
  created_at: string;
  updated_at: string;
}

const iso = (v: unknown) => (v === null || v === undefined ? null : new Date(String(v)).toISOString());

function viewOf(r: Record<string, unknown>): EndpointView {
  const events = typeof r.events === "string" ? parseTextArray(r.events) : (r.events as string[]);
  return {
    id: Number(r.id),
    url: String(r.url),
    description: (r.description as string | null) ?? null,
    events,
    enabled: r.enabled === true,
    disabled_reason: (r.disabled_reason as string | null) ?? null,
    disabled_at: iso(r.disabled_at),
    failing_since: iso(r.failing_since),
    previous_secret_expires_at: iso(r.previous_secret_expires_at),
    created_at: iso(r.created_at)!,
    updated_at: iso(r.updated_at)!,
  };
}

/** A Postgres text[] in its text form (`{a,b}`): our event names need no quoting. */
function parseTextArray(text: string): string[] {
  const inner = text.replace(/^\{|\}$/g, "");
  return inner === "" ? [] : inner.split(",").map((s) => s.replace(/^"|"$/g, ""));
}

const columns = sql`id, url, description, events, enabled, disabled_reason, disabled_at, failing_since,
  previous_secret_expires_at, created_at, updated_at`;

type Allowed = { programId: number; advertiserId: number };

async function manager(db: Database, actor: Actor): Promise<Allowed | Refusal> {
  const membership = await requireProgramMembership(db, actor.userId, actor.programId);
  if (!membership.ok || actor.programId === undefined) return { ok: false, reason: "no_access" };
  if (membership.role !== "owner" && membership.role !== "admin") return { ok: false, reason: "not_manager" };
  return { programId: actor.programId, advertiserId: membership.advertiserId };
}

function audit(a: Allowed, actor: Actor, action: string, changes: Record<string, unknown>): SQL {
  return sql`
    insert into audit_log (advertiser_id, program_id, actor_user_id, action, changes, created_at)
    values (${a.advertiserId}::int, ${a.programId}::int, ${actor.userId}::int, ${action},
            ${JSON.stringify(changes)}::jsonb, ${actor.now.toISOString()}::timestamptz)`;
}

const textArray = (values: readonly string[]) =>
  sql`array[${sql.join(
    values.map((v) => sql`${v}::text`),
    sql`, `,
  )}]::text[]`;

async function run(db: Database, statements: SQL[]) {
  return db.batch(statements.map((s) => db.execute(s)) as [ReturnType<Database["execute"]>]);
}

export async function createEndpoint(
  db: Database,
  actor: Actor,
  body: Record<string, unknown>,
): Promise<{ ok: true; endpoint: EndpointView; secret: string } | Refusal> {
  const allowed = await manager(db, actor);
  if ("ok" in allowed) return allowed;
  if (!actor.secretKey && !actor.unsealedAllowed) return { ok: false, reason: "secret_key_missing" };
  const checked = checkEndpointBody(body, "create");
  if (!checked.ok) return { ok: false, reason: "invalid", message: checked.message };
  const change = checked.value as Required<Pick<EndpointChange, "url" | "events">> & EndpointChange;
  const secret = generateWebhookSecret();
  const at = actor.now.toISOString();
  const [inserted] = await run(db, [
    sql`
      insert into webhook_endpoints (program_id, url, description, events, enabled, secret, created_at, updated_at)
      values (${allowed.programId}::int, ${change.url}, ${change.description ?? null}::text, ${textArray(change.events)},
              ${change.enabled ?? true}::boolean, ${await sealSecret(secret, actor.secretKey)}, ${at}::timestamptz,
              ${at}::timestamptz)
      returning ${columns}`,
    audit(allowed, actor, "program.webhook_endpoint_created", {
      url: { from: null, to: change.url },
      events: { from: null, to: change.events },
    }),
  ]);
  return { ok: true, endpoint: viewOf(inserted.rows[0]!), secret };
}

export async function listEndpoints(
  db: Database,
  actor: Actor,
): Promise<{ ok: true; endpoints: EndpointView[] } | Refusal> {
  const allowed = await manager(db, actor);
  if ("ok" in allowed) return allowed;
  const rows = await db.execute(sql`
    select ${columns} from webhook_endpoints where program_id = ${allowed.programId}::int order by id`);
  return { ok: true, endpoints: rows.rows.map(viewOf) };
}

/** Re-enabling clears the failure record, so the endpoint gets a fresh three days. */
export async function updateEndpoint(
  db: Database,
  actor: Actor & { endpointId: number | undefined },
  body: Record<string, unknown>,
): Promise<{ ok: true; endpoint: EndpointView } | Refusal> {
  const allowed = await manager(db, actor);
  if ("ok" in allowed) return allowed;
  const checked = checkEndpointBody(body, "update");
  if (!checked.ok) return { ok: false, reason: "invalid", message: checked.message };
  if (actor.endpointId === undefined) return { ok: false, reason: "endpoint_not_found" };
  const c = checked.value;
  const at = actor.now.toISOString();
  const [updated] = await run(db, [
    sql`
      update webhook_endpoints set
        url = coalesce(${c.url ?? null}::text, url),
        events = coalesce(${c.events ? textArray(c.events) : sql`null::text[]`}, events),
        description = case when ${c.description !== undefined}::boolean then ${c.description ?? null}::text else description end,
        enabled = coalesce(${c.enabled ?? null}::boolean, enabled),
        failing_since = case when ${c.enabled === true}::boolean and not enabled then null else failing_since end,
        disabled_reason = case when ${c.enabled === true}::boolean then null
                               when ${c.enabled === false}::boolean and enabled then 'by_user' else disabled_reason end,
        disabled_at = case when ${c.enabled === true}::boolean then null
                           when ${c.enabled === false}::boolean and enabled then ${at}::timestamptz else disabled_at end,
        updated_at = ${at}::timestamptz
      where id = ${actor.endpointId}::int and program_id = ${allowed.programId}::int
      returning ${columns}`,
    sql`
      insert into audit_log (advertiser_id, program_id, actor_user_id, action, changes, created_at)
      select ${allowed.advertiserId}::int, ${allowed.programId}::int, ${actor.userId}::int,
             'program.webhook_endpoint_updated', ${JSON.stringify({ endpoint_id: actor.endpointId, ...c })}::jsonb,
             ${at}::timestamptz
      where exists (select 1 from webhook_endpoints where id = ${actor.endpointId}::int
                    and program_id = ${allowed.programId}::int)`,
  ]);
  const row = updated.rows[0];
  if (!row) return { ok: false, reason: "endpoint_not_found" };
  return { ok: true, endpoint: viewOf(row) };
}

export async function deleteEndpoint(
  db: Database,
  actor: Actor & { endpointId: number | undefined },
): Promise<{ ok: true } | Refusal> {
  const allowed = await manager(db, actor);
  if ("ok" in allowed) return allowed;
  if (actor.endpointId === undefined) return { ok: false, reason: "endpoint_not_found" };
  const [deleted] = await run(db, [
    sql`
      delete from webhook_endpoints where id = ${actor.endpointId}::int and program_id = ${allowed.programId}::int
      returning url`,
    sql`
      insert into audit_log (advertiser_id, program_id, actor_user_id, action, changes, created_at)
      select ${allowed.advertiserId}::int, ${allowed.programId}::int, ${actor.userId}::int,
             'program.webhook_endpoint_deleted', ${JSON.stringify({ endpoint_id: actor.endpointId })}::jsonb,
             ${actor.now.toISOString()}::timestamptz
      where not exists (select 1 from webhook_endpoints where id = ${actor.endpointId}::int)`,
  ]);
  return deleted.rows.length > 0 ? { ok: true } : { ok: false, reason: "endpoint_not_found" };
}

/**
 * A new secret; the one it replaces keeps signing too (a second signature in `webhook-signature`) until
 * `overlap_hours` have passed, so the brand can roll its receiver over without missing a delivery.
 */
export async function rotateEndpointSecret(
  db: Database,
  actor: Actor & { endpointId: number | undefined },
  body: Record<string, unknown>,
): Promise<{ ok: true; endpoint: EndpointView; secret: string } | Refusal> {
  const allowed = await manager(db, actor);
  if ("ok" in allowed) return allowed;
  if (!actor.secretKey && !actor.unsealedAllowed) return { ok: false, reason: "secret_key_missing" };
  const overlap = checkOverlapHours(body.overlap_hours);
  if (!overlap.ok) return { ok: false, reason: "invalid", message: overlap.message };
  if (actor.endpointId === undefined) return { ok: false, reason: "endpoint_not_found" };
  const secret = generateWebhookSecret();
  const at = actor.now.toISOString();
  const until = new Date(actor.now.getTime() + overlap.value * 3_600_000).toISOString();
  const [rotated] = await run(db, [
    sql`
      update webhook_endpoints set
        previous_secret = case when ${overlap.value}::int > 0 then secret end,
        previous_secret_expires_at = case when ${overlap.value}::int > 0 then ${until}::timestamptz end,
        secret = ${await sealSecret(secret, actor.secretKey)}, updated_at = ${at}::timestamptz
      where id = ${actor.endpointId}::int and program_id = ${allowed.programId}::int
      returning ${columns}`,
    sql`
      insert into audit_log (advertiser_id, program_id, actor_user_id, action, changes, created_at)
      select ${allowed.advertiserId}::int, ${allowed.programId}::int, ${actor.userId}::int,
             'program.webhook_secret_rotated',
             ${JSON.stringify({ endpoint_id: actor.endpointId, overlap_hours: overlap.value })}::jsonb, ${at}::timestamptz
      where exists (select 1 from webhook_endpoints where id = ${actor.endpointId}::int
                    and program_id = ${allowed.programId}::int)`,
  ]);
  const row = rotated.rows[0];
  if (!row) return { ok: false, reason: "endpoint_not_found" };
  return { ok: true, endpoint: viewOf(row), secret };
}

/**
 * Writes a `webhook.test` event and its delivery to this one endpoint, leased to the caller, who puts it
 * on the queue; should that send fail, the lease runs out and the cron's sweep sends it.
 */
export async function createTestEvent(
  db: Database,
  actor: Actor & { endpointId: number | undefined },
): Promise<{ ok: true; eventId: string; deliveryId: number } | Refusal> {
  const allowed = await manager(db, actor);
  if ("ok" in allowed) return allowed;
  if (actor.endpointId === undefined) return { ok: false, reason: "endpoint_not_found" };
  const at = actor.now.toISOString();
  const eventId = `msg_${crypto.randomUUID().replaceAll("-", "")}`;
  const rows = await db.execute<{ id: string }>(sql`
    with endpoint as (
      select id from webhook_endpoints where id = ${actor.endpointId}::int and program_id = ${allowed.programId}::int
    ), event as (
      insert into webhook_events (id, program_id, type, dedupe_key, data, created_at)
      select ${eventId}, ${allowed.programId}::int, ${testEventType}, ${`test:${eventId}`},
             jsonb_build_object('endpoint_id', endpoint.id, 'program_id', ${allowed.programId}::int,
                                'message', 'A test event sent from the webhook settings'),
             ${at}::timestamptz
      from endpoint
      returning id)
    insert into webhook_deliveries (event_id, endpoint_id, next_attempt_at, lease_until, created_at)
    select event.id, endpoint.id, ${at}::timestamptz, ${at}::timestamptz + interval '5 minutes', ${at}::timestamptz
    from event, endpoint
    returning id`);
  const row = rows.rows[0];
  if (!row) return { ok: false, reason: "endpoint_not_found" };
  return { ok: true, eventId, deliveryId: Number(row.id) };
}

export interface AttemptView {
  id: number;
  delivery_id: number;
  event_id: string;
  event_type: string;
  attempt: number;
  attempted_at: string;
  succeeded: boolean;
  response_status: number | null;
  latency_ms: number;
  error: string | null;
  delivery_status: (typeof webhookDeliveryStatuses)[number];
  next_attempt_at: string | null;
}

/** The endpoint's latest 100 attempts, newest first, each with its delivery's state now. */
export async function listAttempts(
  db: Database,
  actor: Actor & { endpointId: number | undefined },
): Promise<{ ok: true; attempts: AttemptView[] } | Refusal> {
  const allowed = await manager(db, actor);
  if ("ok" in allowed) return allowed;
  if (actor.endpointId === undefined) return { ok: false, reason: "endpoint_not_found" };
  const [endpoint, attempts] = await db.batch([
    db.execute(sql`select id from webhook_endpoints where id = ${actor.endpointId}::int
                   and program_id = ${allowed.programId}::int`),
    db.execute(sql`
      select a.id, a.delivery_id, a.event_id, ev.type as event_type, a.attempt, a.attempted_at, a.succeeded,
             a.response_status, a.latency_ms, a.error, d.status as delivery_status, d.next_attempt_at
      from webhook_delivery_attempts a
      join webhook_deliveries d on d.id = a.delivery_id
      join webhook_events ev on ev.id = a.event_id
      join webhook_endpoints e on e.id = a.endpoint_id
      where a.endpoint_id = ${actor.endpointId}::int and e.program_id = ${allowed.programId}::int
      order by a.attempted_at desc, a.id desc
      limit 100`),
  ]);
  if (endpoint.rows.length === 0) return { ok: false, reason: "endpoint_not_found" };
  return {
    ok: true,
    attempts: attempts.rows.map(attemptViewOf),
  };
}

/** An attempt row (with its event's type and its delivery's state joined in) as the routes and page show it. */
export function attemptViewOf(r: Record<string, unknown>): AttemptView {
  return {
    id: Number(r.id),
    delivery_id: Number(r.delivery_id),
    event_id: String(r.event_id),
    event_type: String(r.event_type),
    attempt: Number(r.attempt),
    attempted_at: iso(r.attempted_at)!,
    succeeded: r.succeeded === true,
    response_status: r.response_status === null ? null : Number(r.response_status),
    latency_ms: Number(r.latency_ms),
    error: (r.error as string | null) ?? null,
    delivery_status: String(r.delivery_status) as AttemptView["delivery_status"],
    next_attempt_at: r.delivery_status === "pending" ? iso(r.next_attempt_at) : null,
  };
}
