import { type AnyColumn, type SQL, sql } from "drizzle-orm";
import { alias } from "drizzle-orm/pg-core";
import { auditLog } from "../../schema/accounts.ts";
import {
  webhookDeliveries,
  webhookDeliveryAttempts,
  type webhookDeliveryStatuses,
  webhookEndpoints,
  webhookEvents,
} from "../../schema/webhooks.ts";
import { requireProgramMembership } from "../auth/require-program-membership.ts";
import type { Database } from "../db/client.ts";
import { columnList, columnName, fromDriver, fromDriverOrNull } from "../db/columns.ts";
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

const e = webhookEndpoints;

/** A timestamp column's value as the API writes it (ISO 8601), or null. */
function iso<C extends AnyColumn<{ data: Date }>>(column: C, value: unknown): string | null {
  return (fromDriverOrNull(column, value) as Date | null)?.toISOString() ?? null;
}

/** An endpoint row of `columns` (the array column reads as an array whichever form the driver gives). */
function viewOf(row: Record<string, unknown>): EndpointView {
  return {
    id: fromDriver(e.id, row.id),
    url: fromDriver(e.url, row.url),
    description: fromDriverOrNull(e.description, row.description),
    events: fromDriver(e.events, row.events),
    enabled: fromDriver(e.enabled, row.enabled) === true,
    disabled_reason: fromDriverOrNull(e.disabledReason, row.disabled_reason),
    disabled_at: iso(e.disabledAt, row.disabled_at),
    failing_since: iso(e.failingSince, row.failing_since),
    previous_secret_expires_at: iso(e.previousSecretExpiresAt, row.previous_secret_expires_at),
    created_at: fromDriver(e.createdAt, row.created_at).toISOString(),
    updated_at: fromDriver(e.updatedAt, row.updated_at).toISOString(),
  };
}

const columns = sql`${e.id} as id, ${e.url} as url, ${e.description} as description, ${e.events} as events,
  ${e.enabled} as enabled, ${e.disabledReason} as disabled_reason, ${e.disabledAt} as disabled_at,
  ${e.failingSince} as failing_since, ${e.previousSecretExpiresAt} as previous_secret_expires_at,
  ${e.createdAt} as created_at, ${e.updatedAt} as updated_at`;

const auditColumns = columnList(
  auditLog.advertiserId,
  auditLog.programId,
  auditLog.actorUserId,
  auditLog.action,
  auditLog.changes,
  auditLog.createdAt,
);
/** `set` targets: a column's bare name. */
const set = columnName;

type Allowed = { programId: number; advertiserId: number };

async function manager(db: Database, actor: Actor): Promise<Allowed | Refusal> {
  const membership = await requireProgramMembership(db, actor.userId, actor.programId);
  if (!membership.ok || actor.programId === undefined) return { ok: false, reason: "no_access" };
  if (membership.role !== "owner" && membership.role !== "admin") return { ok: false, reason: "not_manager" };
  return { programId: actor.programId, advertiserId: membership.advertiserId };
}

function audit(a: Allowed, actor: Actor, action: string, changes: Record<string, unknown>): SQL {
  return sql`
    insert into ${auditLog} (${auditColumns})
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
      insert into ${e} (${columnList(e.programId, e.url, e.description, e.events, e.enabled, e.secret, e.createdAt, e.updatedAt)})
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
    select ${columns} from ${e} where ${e.programId} = ${allowed.programId}::int order by ${e.id}`);
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
      update ${e} set
        ${set(e.url)} = coalesce(${c.url ?? null}::text, ${e.url}),
        ${set(e.events)} = coalesce(${c.events ? textArray(c.events) : sql`null::text[]`}, ${e.events}),
        ${set(e.description)} = case when ${c.description !== undefined}::boolean then ${c.description ?? null}::text else ${e.description} end,
        ${set(e.enabled)} = coalesce(${c.enabled ?? null}::boolean, ${e.enabled}),
        ${set(e.failingSince)} = case when ${c.enabled === true}::boolean and not ${e.enabled} then null else ${e.failingSince} end,
        ${set(e.disabledReason)} = case when ${c.enabled === true}::boolean then null
                               when ${c.enabled === false}::boolean and ${e.enabled} then 'by_user' else ${e.disabledReason} end,
        ${set(e.disabledAt)} = case when ${c.enabled === true}::boolean then null
                           when ${c.enabled === false}::boolean and ${e.enabled} then ${at}::timestamptz else ${e.disabledAt} end,
        ${set(e.updatedAt)} = ${at}::timestamptz
      where ${e.id} = ${actor.endpointId}::int and ${e.programId} = ${allowed.programId}::int
      returning ${columns}`,
    sql`
      insert into ${auditLog} (${auditColumns})
      select ${allowed.advertiserId}::int, ${allowed.programId}::int, ${actor.userId}::int,
             'program.webhook_endpoint_updated', ${JSON.stringify({ endpoint_id: actor.endpointId, ...c })}::jsonb,
             ${at}::timestamptz
      where exists (select 1 from ${e} where ${e.id} = ${actor.endpointId}::int
                    and ${e.programId} = ${allowed.programId}::int)`,
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
      delete from ${e} where ${e.id} = ${actor.endpointId}::int and ${e.programId} = ${allowed.programId}::int
      returning ${e.url}`,
    sql`
      insert into ${auditLog} (${auditColumns})
      select ${allowed.advertiserId}::int, ${allowed.programId}::int, ${actor.userId}::int,
             'program.webhook_endpoint_deleted', ${JSON.stringify({ endpoint_id: actor.endpointId })}::jsonb,
             ${actor.now.toISOString()}::timestamptz
      where not exists (select 1 from ${e} where ${e.id} = ${actor.endpointId}::int)`,
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
  const overlap = checkOverlapHours(body);
  if (!overlap.ok) return { ok: false, reason: "invalid", message: overlap.message };
  if (actor.endpointId === undefined) return { ok: false, reason: "endpoint_not_found" };
  const secret = generateWebhookSecret();
  const at = actor.now.toISOString();
  const until = new Date(actor.now.getTime() + overlap.value * 3_600_000).toISOString();
  const [rotated] = await run(db, [
    sql`
      update ${e} set
        ${set(e.previousSecret)} = case when ${overlap.value}::int > 0 then ${e.secret} end,
        ${set(e.previousSecretExpiresAt)} = case when ${overlap.value}::int > 0 then ${until}::timestamptz end,
        ${set(e.secret)} = ${await sealSecret(secret, actor.secretKey)}, ${set(e.updatedAt)} = ${at}::timestamptz
      where ${e.id} = ${actor.endpointId}::int and ${e.programId} = ${allowed.programId}::int
      returning ${columns}`,
    sql`
      insert into ${auditLog} (${auditColumns})
      select ${allowed.advertiserId}::int, ${allowed.programId}::int, ${actor.userId}::int,
             'program.webhook_secret_rotated',
             ${JSON.stringify({ endpoint_id: actor.endpointId, overlap_hours: overlap.value })}::jsonb, ${at}::timestamptz
      where exists (select 1 from ${e} where ${e.id} = ${actor.endpointId}::int
                    and ${e.programId} = ${allowed.programId}::int)`,
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
  const ev = webhookEvents;
  const d = webhookDeliveries;
  const rows = await db.execute<{ id: string }>(sql`
    with endpoint as (
      select ${e.id} as id from ${e} where ${e.id} = ${actor.endpointId}::int and ${e.programId} = ${allowed.programId}::int
    ), event as (
      insert into ${ev} (${columnList(ev.id, ev.programId, ev.type, ev.dedupeKey, ev.data, ev.createdAt)})
      select ${eventId}, ${allowed.programId}::int, ${testEventType}, ${`test:${eventId}`},
             jsonb_build_object('endpoint_id', endpoint.id, 'program_id', ${allowed.programId}::int,
                                'message', 'A test event sent from the webhook settings'),
             ${at}::timestamptz
      from endpoint
      returning ${ev.id} as id)
    insert into ${d} (${columnList(d.eventId, d.endpointId, d.nextAttemptAt, d.leaseUntil, d.createdAt)})
    select event.id, endpoint.id, ${at}::timestamptz, ${at}::timestamptz + interval '5 minutes', ${at}::timestamptz
    from event, endpoint
    returning ${d.id} as id`);
  const row = rows.rows[0];
  if (!row) return { ok: false, reason: "endpoint_not_found" };
  return { ok: true, eventId, deliveryId: fromDriver(d.id, row.id) };
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
  const a = alias(webhookDeliveryAttempts, "a");
  const d = alias(webhookDeliveries, "d");
  const ev = alias(webhookEvents, "ev");
  const ep = alias(webhookEndpoints, "e");
  const [endpoint, attempts] = await db.batch([
    db.execute(sql`select ${e.id} from ${e} where ${e.id} = ${actor.endpointId}::int
                   and ${e.programId} = ${allowed.programId}::int`),
    db.execute(sql`
      select ${a.id} as id, ${a.deliveryId} as delivery_id, ${a.eventId} as event_id, ${ev.type} as event_type,
             ${a.attempt} as attempt, ${a.attemptedAt} as attempted_at, ${a.succeeded} as succeeded,
             ${a.responseStatus} as response_status, ${a.latencyMs} as latency_ms, ${a.error} as error,
             ${d.status} as delivery_status, ${d.nextAttemptAt} as next_attempt_at
      from ${webhookDeliveryAttempts} ${a}
      join ${webhookDeliveries} ${d} on ${d.id} = ${a.deliveryId}
      join ${webhookEvents} ${ev} on ${ev.id} = ${a.eventId}
      join ${webhookEndpoints} ${ep} on ${ep.id} = ${a.endpointId}
      where ${a.endpointId} = ${actor.endpointId}::int and ${ep.programId} = ${allowed.programId}::int
      order by ${a.attemptedAt} desc, ${a.id} desc
      limit 100`),
  ]);
  if (endpoint.rows.length === 0) return { ok: false, reason: "endpoint_not_found" };
  return {
    ok: true,
    attempts: attempts.rows.map(attemptViewOf),
  };
}

/** An attempt row (with its event's type and its delivery's state joined in) as the routes and page show it. */
export function attemptViewOf(row: Record<string, unknown>): AttemptView {
  const a = webhookDeliveryAttempts;
  const deliveryStatus = fromDriver(webhookDeliveries.status, row.delivery_status);
  return {
    id: fromDriver(a.id, row.id),
    delivery_id: fromDriver(a.deliveryId, row.delivery_id),
    event_id: fromDriver(a.eventId, row.event_id),
    event_type: fromDriver(webhookEvents.type, row.event_type),
    attempt: fromDriver(a.attempt, row.attempt),
    attempted_at: fromDriver(a.attemptedAt, row.attempted_at).toISOString(),
    succeeded: fromDriver(a.succeeded, row.succeeded) === true,
    response_status: fromDriverOrNull(a.responseStatus, row.response_status),
    latency_ms: fromDriver(a.latencyMs, row.latency_ms),
    error: fromDriverOrNull(a.error, row.error),
    delivery_status: deliveryStatus,
    next_attempt_at:
      deliveryStatus === "pending" ? iso(webhookDeliveries.nextAttemptAt, row.next_attempt_at) : null,
  };
}
