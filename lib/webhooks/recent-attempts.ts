import { sql } from "drizzle-orm";
import type { Database } from "../db/client.ts";
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
  const rows = await db.execute(sql`
    select a.endpoint_id, a.id, a.delivery_id, a.event_id, ev.type as event_type, a.attempt, a.attempted_at,
           a.succeeded, a.response_status, a.latency_ms, a.error, d.status as delivery_status, d.next_attempt_at
    from webhook_endpoints e
    cross join lateral (
      select * from webhook_delivery_attempts
      where endpoint_id = e.id
      order by attempted_at desc, id desc
      limit ${perEndpoint}::int) a
    join webhook_deliveries d on d.id = a.delivery_id
    join webhook_events ev on ev.id = a.event_id
    where e.program_id = ${programId}::int
    order by a.endpoint_id, a.attempted_at desc, a.id desc`);
  const byEndpoint = new Map<number, AttemptView[]>();
  for (const row of rows.rows) {
    const endpointId = Number(row.endpoint_id);
    const list = byEndpoint.get(endpointId) ?? [];
    list.push(attemptViewOf(row));
    byEndpoint.set(endpointId, list);
  }
  return byEndpoint;
}
