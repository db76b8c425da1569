import { sql } from "drizzle-orm";
import type { Database } from "../db/client.ts";

/** A claim older than this is taken as abandoned (the worker died mid-way) and may be claimed again. */
export const claimLeaseMs = 5 * 60_000;

export type Claim =
  /** Ours to process; `attempts` identifies this claim when completing it. */
  | { kind: "claimed"; programId: number; attempts: number }
  /** The account is connected to no program: nothing recorded. */
  | { kind: "unknown_account" }
  /** Processed before: a replay does nothing. */
  | { kind: "completed" }
  /** Another delivery of the same event holds a live claim. */
  | { kind: "in_progress" };

/**
 * Claims an event in ONE statement: a new event is inserted `claimed` (only when its account maps to a
 * program); a `failed` one, or a `claimed` one past its lease, is claimed again (`attempts + 1`). The
 * event's unique id makes concurrent deliveries of one event meet here: exactly one of them claims it.
 * `payload`, the raw body, is kept for an operator's replay.
 */
export async function claimEvent(
  db: Database,
  e: { eventId: string; type: string; accountId: string; livemode: boolean; payload: string; now: Date },
): Promise<Claim> {
  const at = e.now.toISOString();
  const leaseStart = new Date(e.now.getTime() - claimLeaseMs).toISOString();
  const result = await db.execute(sql`
    with program as (select id from programs where stripe_account_id = ${e.accountId}),
    claimed as (
      insert into stripe_events
        (event_id, type, account_id, program_id, livemode, status, attempts, claimed_at, payload)
      select ${e.eventId}, ${e.type}, ${e.accountId}, program.id, ${e.livemode}::boolean, 'claimed', 1,
             ${at}::timestamptz, ${e.payload}::text
      from program
      on conflict (event_id) do update
        set status = 'claimed', claimed_at = excluded.claimed_at, attempts = stripe_events.attempts + 1,
            last_error = null, payload = coalesce(stripe_events.payload, excluded.payload)
        where stripe_events.status = 'failed'
           or (stripe_events.status = 'claimed' and stripe_events.claimed_at < ${leaseStart}::timestamptz)
      returning program_id, attempts)
    select (select id from program) as program_id,
           (select attempts from claimed) as attempts,
           (select status from stripe_events where event_id = ${e.eventId}) as status`);
  const row = result.rows[0];
  if (!row || row.program_id === null) return { kind: "unknown_account" };
  if (row.attempts !== null) {
    return { kind: "claimed", programId: Number(row.program_id), attempts: Number(row.attempts) };
  }
  // Not claimed: completed before, or claimed by a delivery that is still within its lease (including one
  // that committed after this statement's snapshot, which then shows no status at all).
  return row.status === "completed" ? { kind: "completed" } : { kind: "in_progress" };
}

export async function completeEvent(
  db: Database,
  eventId: string,
  attempts: number,
  outcome: string,
  now: Date,
): Promise<void> {
  await db.execute(sql`
    update stripe_events
    set status = 'completed', completed_at = ${now.toISOString()}::timestamptz, outcome = ${outcome}
    where event_id = ${eventId} and status = 'claimed' and attempts = ${attempts}::int`);
}

/** Best effort: a claim that cannot be marked failed is re-claimable anyway once its lease ends. */
export async function failEvent(
  db: Database,
  eventId: string,
  attempts: number,
  error: string,
): Promise<void> {
  await db.execute(sql`
    update stripe_events set status = 'failed', last_error = ${error.slice(0, 1000)}
    where event_id = ${eventId} and status = 'claimed' and attempts = ${attempts}::int`);
}
