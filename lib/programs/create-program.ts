import { sql } from "drizzle-orm";
import { auditLog } from "../../schema/accounts.ts";
import { programApiKeys, programs } from "../../schema/programs.ts";
import { workspaceMembers } from "../../schema/workspaces.ts";
import { issueApiKey } from "../auth/api-keys.ts";
import type { Database } from "../db/client.ts";
import { columnList, fromDriver } from "../db/columns.ts";
import type { NewProgramFields } from "./program-rules.ts";

/**
 * Creates a program with its live and test API keys in the caller's workspace, and returns the keys: the
 * only time they are ever shown (only their SHA-256 is stored). Used by the command-line `init` and
 * the dashboard. Who may create: an active owner or admin of the workspace.
 */
export type CreateProgramResult =
  | { ok: true; programId: number; advertiserId: number; apiKey: string; testApiKey: string }
  | { ok: false; reason: "no_advertiser" | "advertiser_mismatch" };

export interface CreateProgramInput {
  userId: number;
  /**
   * The workspace the caller named, as sent (the body's `advertiser_id`: `init` and `POST /api/v1/programs`
   * take it alike); absent or null: the caller's own (the first one they own or administer).
   */
  advertiserId?: unknown;
  fields: NewProgramFields;
}

const creatorRoles = ["owner", "admin"];

/** The 403 messages of a workspace refused to a new program (spec: the command line's `init`). */
export const workspaceRefusalMessages: Record<"no_advertiser" | "advertiser_mismatch", string> = {
  no_advertiser: "No advertiser found for this account",
  advertiser_mismatch: "advertiser_id does not match the authenticated account",
};

/**
 * The workspace id a caller named: none for absent or null; NaN for a value that is no integer, which can be
 * no workspace of the caller's (`advertiser_mismatch`).
 */
function requestedAdvertiserId(requested: unknown): number | undefined {
  if (requested === undefined || requested === null) return undefined;
  const id = typeof requested === "number" || typeof requested === "string" ? Number(requested) : Number.NaN;
  return Number.isSafeInteger(id) ? id : Number.NaN;
}

/** Decides the workspace from the caller's memberships. Pure. */
export function decideWorkspace(
  memberships: readonly { advertiserId: number; role: string }[],
  requested: number | undefined,
): { ok: true; advertiserId: number } | { ok: false; reason: "no_advertiser" | "advertiser_mismatch" } {
  const eligible = memberships.filter((m) => creatorRoles.includes(m.role));
  if (requested !== undefined) {
    return eligible.some((m) => m.advertiserId === requested)
      ? { ok: true, advertiserId: requested }
      : { ok: false, reason: memberships.length === 0 ? "no_advertiser" : "advertiser_mismatch" };
  }
  const owned = eligible.find((m) => m.role === "owner") ?? eligible[0];
  return owned ? { ok: true, advertiserId: owned.advertiserId } : { ok: false, reason: "no_advertiser" };
}

export async function createProgram(db: Database, input: CreateProgramInput): Promise<CreateProgramResult> {
  const requested = requestedAdvertiserId(input.advertiserId);
  if (Number.isNaN(requested)) return { ok: false, reason: "advertiser_mismatch" };
  const m = workspaceMembers;
  const p = programs;
  const k = programApiKeys;
  const a = auditLog;
  const read = await db.execute<{ advertiser_id: number; role: string }>(sql`
    select ${m.advertiserId} as advertiser_id, ${m.role} as role from ${m}
    where ${m.userId} = ${input.userId} and ${m.status} = 'active' order by ${m.id}`);
  const memberships = read.rows.map((row) => ({
    advertiserId: fromDriver(m.advertiserId, row.advertiser_id),
    role: row.role,
  }));
  const workspace = decideWorkspace(memberships, requested);
  if (!workspace.ok) return workspace;

  const live = await issueApiKey(false);
  const test = await issueApiKey(true);
  const f = input.fields;
  // One statement: the membership is re-checked in the insert, so a membership removed since the read
  // creates nothing.
  const written = await db.execute<{ id: number }>(sql`
    with program as (
      insert into ${p} (${columnList(p.advertiserId, p.name, p.domain, p.attributionWindowDays, p.commissionType, p.commissionRate, p.durationMonths)})
      select ${workspace.advertiserId}, ${f.name}, ${f.domain}, ${f.attributionWindowDays},
             ${f.commissionType}, ${f.commissionRate}::numeric, ${f.durationMonths}
      where exists (select 1 from ${m}
                    where ${m.userId} = ${input.userId} and ${m.advertiserId} = ${workspace.advertiserId}
                      and ${m.status} = 'active' and ${m.role} in ('owner', 'admin'))
      returning ${p.id} as id
    ), keys as (
      insert into ${k} (${columnList(k.programId, k.keyHash, k.keyPrefix, k.keyLast4, k.isTest)})
      select program.id, k.hash, k.prefix, k.last4, k.is_test from program,
        (values (${live.keyHash}, ${live.keyPrefix}, ${live.keyLast4}, false),
                (${test.keyHash}, ${test.keyPrefix}, ${test.keyLast4}, true))
          as k(hash, prefix, last4, is_test)
      returning ${k.id}
    ), audit as (
      insert into ${a} (${columnList(a.advertiserId, a.programId, a.actorUserId, a.action, a.changes)})
      select ${workspace.advertiserId}, program.id, ${input.userId}, 'program.created',
             jsonb_build_object('name', jsonb_build_object('from', null, 'to', ${f.name}::text))
      from program
      returning ${a.id}
    )
    select id from program`);
  const programId = written.rows[0]?.id;
  if (programId === undefined) return { ok: false, reason: "no_advertiser" };
  return {
    ok: true,
    programId: fromDriver(p.id, programId),
    advertiserId: workspace.advertiserId,
    apiKey: live.key,
    testApiKey: test.key,
  };
}
