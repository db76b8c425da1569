import { sql } from "drizzle-orm";
import { programs } from "../../schema/programs.ts";
import { stripeEvents } from "../../schema/stripe-events.ts";
import type { Database } from "../db/client.ts";
import { columnList, columnName, fromDriver } from "../db/columns.ts";

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
  const t = stripeEvents;
  const p = programs;
  const excluded = (column: typeof t.claimedAt | typeof t.payload) => sql`excluded.${columnName(column)}`;
  const result = await db.execute(sql`
    with program as (select ${p.id} as id from ${p} where ${p.stripeAccountId} = ${e.accountId}),
    claimed as (
      insert into ${t}
        (${columnList(
          t.eventId,
          t.type,
          t.accountId,
          t.programId,
          t.livemode,
          t.status,
          t.attempts,
          t.claimedAt,
          t.payload,
        )})
      select ${e.eventId}, ${e.type}, ${e.accountId}, program.id, ${e.livemode}::boolean, 'claimed', 1,
             ${at}::timestamptz, ${e.payload}::text
      from program
      on conflict (${columnName(t.eventId)}) do update
        set ${columnName(t.status)} = 'claimed', ${columnName(t.claimedAt)} = ${excluded(t.claimedAt)},
            ${columnName(t.attempts)} = ${t.attempts} + 1, ${columnName(t.lastError)} = null,
            ${columnName(t.payload)} = coalesce(${t.payload}, ${excluded(t.payload)})
        where ${t.status} = 'failed'
           or (${t.status} = 'claimed' and ${t.claimedAt} < ${leaseStart}::timestamptz)
      returning ${t.programId} as program_id, ${t.attempts} as attempts)
    select (select id from program) as program_id,
           (select attempts from claimed) as attempts,
           (select ${t.status} from ${t} where ${t.eventId} = ${e.eventId}) as status`);
  const row = result.rows[0];
  if (!row || row.program_id === null) return { kind: "unknown_account" };
  if (row.attempts !== null) {
    return {
      kind: "claimed",
      programId: fromDriver(p.id, row.program_id),
      attempts: fromDriver(t.attempts, row.attempts),
    };
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
  const t = stripeEvents;
  await db.execute(sql`
    update ${t}
    set ${columnName(t.status)} = 'completed', ${columnName(t.completedAt)} = ${now.toISOString()}::timestamptz,
        ${columnName(t.outcome)} = ${outcome}
    where ${t.eventId} = ${eventId} and ${t.status} = 'claimed' and ${t.attempts} = ${attempts}::int`);
}

/** Best effort: a claim that cannot be marked failed is re-claimable anyway once its lease ends. */
export async function failEvent(
  db: Database,
  eventId: string,
  attempts: number,
  error: string,
): Promise<void> {
  const t = stripeEvents;
  await db.execute(sql`
    update ${t} set ${columnName(t.status)} = 'failed', ${columnName(t.lastError)} = ${error.slice(0, 1000)}
    where ${t.eventId} = ${eventId} and ${t.status} = 'claimed' and ${t.attempts} = ${attempts}::int`);
}
