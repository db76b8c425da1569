import { sql } from "drizzle-orm";
import { alias } from "drizzle-orm/pg-core";
import {
  webhookDeliveries,
  webhookDeliveryAttempts,
  webhookEndpoints,
  webhookEvents,
} from "../../schema/webhooks.ts";
import type { Database } from "../db/client.ts";
import { fromDriver } from "../db/columns.ts";
import { type AttemptView, attemptViewOf } from "./manage-endpoints.ts";

/**
 * The latest `perEndpoint` attempts of each of the program's endpoints, newest first, keyed by endpoint id:
 * one statement, each endpoint's slice read backwards from `webhook_delivery_attempts_endpoint_idx`, so a
 * long history costs nothing more. The caller has checked the person may manage the program's webhooks.
 */
export async function recentAttemptsByEndpoint(
  db: Database,
  programId: number,
  perEndpoint: number,
): Promise<Map<number, AttemptView[]>> {
  const e = alias(webhookEndpoints, "e");
  const t = webhookDeliveryAttempts;
  const a = alias(webhookDeliveryAttempts, "a");
  const d = alias(webhookDeliveries, "d");
  const ev = alias(webhookEvents, "ev");
  const rows = await db.execute(sql`
    select ${a.endpointId} as endpoint_id, ${a.id} as id, ${a.deliveryId} as delivery_id, ${a.eventId} as event_id,
           ${ev.type} as event_type, ${a.attempt} as attempt, ${a.attemptedAt} as attempted_at,
           ${a.succeeded} as succeeded, ${a.responseStatus} as response_status, ${a.latencyMs} as latency_ms,
           ${a.error} as error, ${d.status} as delivery_status, ${d.nextAttemptAt} as next_attempt_at
    from ${webhookEndpoints} ${e}
    cross join lateral (
      select * from ${t}
      where ${t.endpointId} = ${e.id}
      order by ${t.attemptedAt} desc, ${t.id} desc
      limit ${perEndpoint}::int) ${a}
    join ${webhookDeliveries} ${d} on ${d.id} = ${a.deliveryId}
    join ${webhookEvents} ${ev} on ${ev.id} = ${a.eventId}
    where ${e.programId} = ${programId}::int
    order by ${a.endpointId}, ${a.attemptedAt} desc, ${a.id} desc`);
  const byEndpoint = new Map<number, AttemptView[]>();
  for (const row of rows.rows) {
    const endpointId = fromDriver(webhookEndpoints.id, row.endpoint_id);
    const list = byEndpoint.get(endpointId) ?? [];
    list.push(attemptViewOf(row));
    byEndpoint.set(endpointId, list);
  }
  return byEndpoint;
}
