import { type SQL, sql } from "drizzle-orm";
import { alias } from "drizzle-orm/pg-core";
import { notifications } from "../../schema/notifications.ts";
import { programs } from "../../schema/programs.ts";
import {
  webhookDeliveries,
  webhookDeliveryAttempts,
  webhookEndpoints,
  webhookEvents,
} from "../../schema/webhooks.ts";
import type { Database } from "../db/client.ts";
import { columnList, columnName, fromDriver, fromDriverOrNull } from "../db/columns.ts";
import { webhookBody } from "./payload.ts";
import { attemptTimeoutMs, giveUpAfterMs, webhookRetryDelaySeconds } from "./retry-policy.ts";
import { openSecret } from "./secret-box.ts";
import { signWebhook } from "./sign.ts";

interface DeliveryRow extends Record<string, unknown> {
  id: string;
  status: string;
  attempts: number;
  next_attempt_at: string;
  delivery_created_at: string;
  event_id: string;
  type: string;
  api_version: string;
  data: unknown;
  event_created_at: string;
  endpoint_id: number;
  url: string;
  enabled: boolean;
  secret: string;
  previous_secret: string | null;
  previous_secret_expires_at: string | null;
  failing_since: string | null;
  program_id: number;
  advertiser_id: number;
}

const d = webhookDeliveries;
const e = webhookEndpoints;
/** `set` targets and `on conflict` columns: a column's bare name. */
const set = columnName;

export type DeliveryOutcome = "succeeded" | "retry_scheduled" | "gave_up" | "endpoint_disabled" | "skipped";

export interface DeliverOptions {
  now: () => Date;
  secretKey: string | undefined;
  fetch?: typeof fetch;
}

/**
 * Attempts one delivery: read it (one round trip), sign and POST it, then record the attempt and its
 * consequence in one transaction. A delivery already done, not due yet (a duplicate queue message), or
 * whose endpoint was disabled meanwhile, is not sent. A 2xx answer is a success; anything else, a network
 * error or a timeout is a failure, retried with backoff for three days; an endpoint failing for three days
 * is disabled and its workspace notified.
 */
export async function deliverWebhook(
  db: Database,
  deliveryId: number,
  options: DeliverOptions,
): Promise<DeliveryOutcome> {
  const rd = alias(webhookDeliveries, "d");
  const ev = alias(webhookEvents, "ev");
  const re = alias(webhookEndpoints, "e");
  const p = alias(programs, "p");
  const read = await db.execute<DeliveryRow>(sql`
    select ${rd.id} as id, ${rd.status} as status, ${rd.attempts} as attempts, ${rd.nextAttemptAt} as next_attempt_at,
           ${rd.createdAt} as delivery_created_at,
           ${ev.id} as event_id, ${ev.type} as type, ${ev.apiVersion} as api_version, ${ev.data} as data,
           ${ev.createdAt} as event_created_at,
           ${re.id} as endpoint_id, ${re.url} as url, ${re.enabled} as enabled, ${re.secret} as secret,
           ${re.previousSecret} as previous_secret, ${re.previousSecretExpiresAt} as previous_secret_expires_at,
           ${re.failingSince} as failing_since, ${re.programId} as program_id, ${p.advertiserId} as advertiser_id
    from ${webhookDeliveries} ${rd}
    join ${webhookEvents} ${ev} on ${ev.id} = ${rd.eventId}
    join ${webhookEndpoints} ${re} on ${re.id} = ${rd.endpointId}
    join ${programs} ${p} on ${p.id} = ${re.programId}
    where ${rd.id} = ${deliveryId}::bigint`);
  const row = read.rows[0];
  const started = options.now();
  if (row?.status !== "pending" || fromDriver(rd.nextAttemptAt, row.next_attempt_at) > started)
    return "skipped";
  if (!row.enabled) {
    await db.execute(sql`
      update ${d} set ${set(d.status)} = 'cancelled', ${set(d.completedAt)} = ${started.toISOString()}::timestamptz,
             ${set(d.leaseUntil)} = null
      where ${d.id} = ${deliveryId}::bigint and ${d.status} = 'pending'`);
    return "skipped";
  }

  const secrets = [await openSecret(row.secret, options.secretKey)];
  const previousSecretExpiresAt = fromDriverOrNull(
    re.previousSecretExpiresAt,
    row.previous_secret_expires_at,
  );
  if (row.previous_secret && previousSecretExpiresAt && previousSecretExpiresAt > started)
    secrets.push(await openSecret(row.previous_secret, options.secretKey));
  const body = webhookBody({
    id: row.event_id,
    type: row.type,
    apiVersion: row.api_version,
    createdAt: fromDriver(ev.createdAt, row.event_created_at),
    data: (typeof row.data === "string" ? JSON.parse(row.data) : row.data) as Record<string, unknown>,
  });
  const headers = await signWebhook(secrets, { id: row.event_id, timestamp: started, body });

  const send = options.fetch ?? fetch;
  const clockStart = Date.now();
  let status: number | null = null;
  let failure: string | null = null;
  try {
    const response = await send(row.url, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        "user-agent": "affiliate-tracking-webhooks/1",
        ...headers,
      },
      body,
      redirect: "manual",
      signal: AbortSignal.timeout(attemptTimeoutMs),
    });
    status = response.status;
    await response.body?.cancel();
    if (status < 200 || status > 299) failure = `HTTP ${status}`;
  } catch (error) {
    failure = error instanceof Error && error.name === "TimeoutError" ? "timeout" : "network error";
  }
  const latencyMs = Date.now() - clockStart;
  const attempt = row.attempts + 1;
  const at = started.toISOString();
  const statements: SQL[] = [
    sql`
      insert into ${webhookDeliveryAttempts}
        (${columnList(
          webhookDeliveryAttempts.deliveryId,
          webhookDeliveryAttempts.endpointId,
          webhookDeliveryAttempts.eventId,
          webhookDeliveryAttempts.attempt,
          webhookDeliveryAttempts.attemptedAt,
          webhookDeliveryAttempts.succeeded,
          webhookDeliveryAttempts.responseStatus,
          webhookDeliveryAttempts.latencyMs,
          webhookDeliveryAttempts.error,
        )})
      values (${deliveryId}::bigint, ${row.endpoint_id}::int, ${row.event_id}, ${attempt}::int, ${at}::timestamptz,
              ${failure === null}::boolean, ${status}::int, ${latencyMs}::int, ${failure}::text)`,
  ];
  let outcome: DeliveryOutcome;
  if (failure === null) {
    outcome = "succeeded";
    statements.push(
      sql`
        update ${d}
        set ${set(d.status)} = 'succeeded', ${set(d.attempts)} = ${attempt}::int, ${set(d.lastAttemptAt)} = ${at}::timestamptz,
            ${set(d.completedAt)} = ${at}::timestamptz, ${set(d.leaseUntil)} = null
        where ${d.id} = ${deliveryId}::bigint and ${d.status} = 'pending'`,
      sql`update ${e} set ${set(e.failingSince)} = null where ${e.id} = ${row.endpoint_id}::int`,
    );
  } else {
    const failingSince = fromDriverOrNull(re.failingSince, row.failing_since) ?? started;
    const endpointDead = started.getTime() - failingSince.getTime() >= giveUpAfterMs;
    const deliveryCreatedAt = fromDriver(rd.createdAt, row.delivery_created_at);
    const deliveryDead = started.getTime() - deliveryCreatedAt.getTime() >= giveUpAfterMs;
    const next = new Date(started.getTime() + webhookRetryDelaySeconds(attempt) * 1000).toISOString();
    statements.push(
      sql`
        update ${d}
        set ${set(d.attempts)} = ${attempt}::int, ${set(d.lastAttemptAt)} = ${at}::timestamptz, ${set(d.leaseUntil)} = null,
            ${set(d.status)} = case when ${deliveryDead || endpointDead}::boolean then 'failed' else 'pending' end,
            ${set(d.completedAt)} = case when ${deliveryDead || endpointDead}::boolean then ${at}::timestamptz end,
            ${set(d.nextAttemptAt)} = ${next}::timestamptz
        where ${d.id} = ${deliveryId}::bigint and ${d.status} = 'pending'`,
      sql`
        update ${e} set ${set(e.failingSince)} = coalesce(${e.failingSince}, ${at}::timestamptz)
        where ${e.id} = ${row.endpoint_id}::int`,
    );
    if (endpointDead) statements.push(...disableEndpoint(row, at));
    outcome = endpointDead ? "endpoint_disabled" : deliveryDead ? "gave_up" : "retry_scheduled";
  }
  await db.batch(statements.map((s) => db.execute(s)) as [ReturnType<Database["execute"]>]);
  return outcome;
}

/**
 * Turns the endpoint off, ends its other pending deliveries, and writes one in-app notification for the
 * program's workspace (the notifications table the queue consumer writes as well; the dedupe key names this
 * disabling, so a repeated attempt writes it once).
 */
function disableEndpoint(row: DeliveryRow, at: string): SQL[] {
  const n = notifications;
  return [
    sql`
      update ${e}
      set ${set(e.enabled)} = false, ${set(e.disabledReason)} = 'failing', ${set(e.disabledAt)} = ${at}::timestamptz,
          ${set(e.updatedAt)} = ${at}::timestamptz
      where ${e.id} = ${row.endpoint_id}::int and ${e.enabled}`,
    sql`
      update ${d} set ${set(d.status)} = 'cancelled', ${set(d.completedAt)} = ${at}::timestamptz, ${set(d.leaseUntil)} = null
      where ${d.endpointId} = ${row.endpoint_id}::int and ${d.status} = 'pending'`,
    sql`
      insert into ${notifications} (${columnList(n.recipientType, n.recipientId, n.programId, n.kind, n.payload, n.dedupeKey)})
      values ('advertiser', ${row.advertiser_id}::int, ${row.program_id}::int, 'webhook_endpoint_disabled',
              ${JSON.stringify({ endpoint_id: row.endpoint_id, url: row.url, failing_since: row.failing_since ?? at })}::jsonb,
              ${`webhook_endpoint:${row.endpoint_id}:disabled:${row.failing_since ?? at}`})
      on conflict (${set(n.dedupeKey)}) do nothing`,
  ];
}
