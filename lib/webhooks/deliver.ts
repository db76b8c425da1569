import { type SQL, sql } from "drizzle-orm";
import type { Database } from "../db/client.ts";
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
  const read = await db.execute<DeliveryRow>(sql`
    select d.id, d.status, d.attempts, d.next_attempt_at, d.created_at as delivery_created_at,
           ev.id as event_id, ev.type, ev.api_version, ev.data, ev.created_at as event_created_at,
           e.id as endpoint_id, e.url, e.enabled, e.secret, e.previous_secret, e.previous_secret_expires_at,
           e.failing_since, e.program_id, p.advertiser_id
    from webhook_deliveries d
    join webhook_events ev on ev.id = d.event_id
    join webhook_endpoints e on e.id = d.endpoint_id
    join programs p on p.id = e.program_id
    where d.id = ${deliveryId}::bigint`);
  const row = read.rows[0];
  const started = options.now();
  if (row?.status !== "pending" || new Date(row.next_attempt_at) > started) return "skipped";
  if (!row.enabled) {
    await db.execute(sql`
      update webhook_deliveries set status = 'cancelled', completed_at = ${started.toISOString()}::timestamptz,
             lease_until = null
      where id = ${deliveryId}::bigint and status = 'pending'`);
    return "skipped";
  }

  const secrets = [await openSecret(row.secret, options.secretKey)];
  if (
    row.previous_secret &&
    row.previous_secret_expires_at &&
    new Date(row.previous_secret_expires_at) > started
  )
    secrets.push(await openSecret(row.previous_secret, options.secretKey));
  const body = webhookBody({
    id: row.event_id,
    type: row.type,
    apiVersion: row.api_version,
    createdAt: new Date(row.event_created_at),
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
      insert into webhook_delivery_attempts
        (delivery_id, endpoint_id, event_id, attempt, attempted_at, succeeded, response_status, latency_ms, error)
      values (${deliveryId}::bigint, ${row.endpoint_id}::int, ${row.event_id}, ${attempt}::int, ${at}::timestamptz,
              ${failure === null}::boolean, ${status}::int, ${latencyMs}::int, ${failure}::text)`,
  ];
  let outcome: DeliveryOutcome;
  if (failure === null) {
    outcome = "succeeded";
    statements.push(
      sql`
        update webhook_deliveries
        set status = 'succeeded', attempts = ${attempt}::int, last_attempt_at = ${at}::timestamptz,
            completed_at = ${at}::timestamptz, lease_until = null
        where id = ${deliveryId}::bigint and status = 'pending'`,
      sql`update webhook_endpoints set failing_since = null where id = ${row.endpoint_id}::int`,
    );
  } else {
    const failingSince = row.failing_since ? new Date(row.failing_since) : started;
    const endpointDead = started.getTime() - failingSince.getTime() >= giveUpAfterMs;
    const deliveryDead = started.getTime() - new Date(row.delivery_created_at).getTime() >= giveUpAfterMs;
    const next = new Date(started.getTime() + webhookRetryDelaySeconds(attempt) * 1000).toISOString();
    statements.push(
      sql`
        update webhook_deliveries
        set attempts = ${attempt}::int, last_attempt_at = ${at}::timestamptz, lease_until = null,
            status = case when ${deliveryDead || endpointDead}::boolean then 'failed' else 'pending' end,
            completed_at = case when ${deliveryDead || endpointDead}::boolean then ${at}::timestamptz end,
            next_attempt_at = ${next}::timestamptz
        where id = ${deliveryId}::bigint and status = 'pending'`,
      sql`
        update webhook_endpoints set failing_since = coalesce(failing_since, ${at}::timestamptz)
        where id = ${row.endpoint_id}::int`,
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
  return [
    sql`
      update webhook_endpoints
      set enabled = false, disabled_reason = 'failing', disabled_at = ${at}::timestamptz, updated_at = ${at}::timestamptz
      where id = ${row.endpoint_id}::int and enabled`,
    sql`
      update webhook_deliveries set status = 'cancelled', completed_at = ${at}::timestamptz, lease_until = null
      where endpoint_id = ${row.endpoint_id}::int and status = 'pending'`,
    sql`
      insert into notifications (recipient_type, recipient_id, program_id, kind, payload, dedupe_key)
      values ('advertiser', ${row.advertiser_id}::int, ${row.program_id}::int, 'webhook_endpoint_disabled',
              ${JSON.stringify({ endpoint_id: row.endpoint_id, url: row.url, failing_since: row.failing_since ?? at })}::jsonb,
              ${`webhook_endpoint:${row.endpoint_id}:disabled:${row.failing_since ?? at}`})
      on conflict (dedupe_key) do nothing`,
  ];
}
