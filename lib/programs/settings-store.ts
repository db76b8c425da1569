import { and, asc, desc, eq, isNull, sql } from "drizzle-orm";
import { auditLog, commissionRules, programApiKeys, programs, workspaceMembers } from "../../schema/index.ts";
import type { Database } from "../db/client.ts";
import type { ProgramSettings, SettingChanges } from "./decide-settings-change.ts";

/** A program API key as settings show it: never the key, only what masks it. */
export interface StoredKey {
  id: number;
  isTest: boolean;
  keyPrefix: string;
  keyLast4: string | null;
  createdAt: Date;
  rotateBy: Date | null;
}

export interface StoredSettings {
  programId: number;
  advertiserId: number;
  /** `updated_at` as text, to the microsecond: the write is guarded on it. */
  version: string;
  settings: ProgramSettings;
  keys: StoredKey[];
}

/** Decimal text from `numeric(14, 4)` ("20.0000") to its short form ("20"). */
function rate(value: string): string {
  return String(Number(value));
}

/** One round trip: the program, its per-product rules and its keys still in use. */
export async function readProgramSettings(db: Database, programId: number): Promise<StoredSettings | null> {
  const [programRows, ruleRows, keyRows] = await db.batch([
    db
      .select({ program: programs, version: sql<string>`${programs.updatedAt}::text` })
      .from(programs)
      .where(eq(programs.id, programId)),
    db
      .select()
      .from(commissionRules)
      .where(eq(commissionRules.programId, programId))
      .orderBy(asc(commissionRules.id)),
    db
      .select()
      .from(programApiKeys)
      .where(and(eq(programApiKeys.programId, programId), isNull(programApiKeys.revokedAt)))
      .orderBy(desc(programApiKeys.id)),
  ]);
  const row = programRows[0];
  if (!row) return null;
  const p = row.program;
  return {
    programId: p.id,
    advertiserId: p.advertiserId,
    version: row.version,
    settings: {
      name: p.name,
      domain: p.domain,
      attributionWindowDays: p.attributionWindowDays,
      leadAuthPolicy: p.leadAuthPolicy,
      allowedOrigins: p.allowedOrigins,
      commissionType: p.commissionType,
      commissionRate: rate(p.commissionRate),
      durationMonths: p.durationMonths,
      holdDays: p.holdDays,
      commissionRules: ruleRows.map((r) => ({
        productId: r.productId,
        commissionType: r.commissionType,
        commissionRate: rate(r.commissionRate),
        durationMonths: r.durationMonths,
      })),
      stripeAccountId: p.stripeAccountId,
      holdFlaggedCommissions: p.holdFlaggedCommissions,
      emailAttributionSettledLeadsOnly: p.emailAttributionSettledOnly,
    },
    keys: keyRows.map((k) => ({
      id: k.id,
      isTest: k.isTest,
      keyPrefix: k.keyPrefix,
      keyLast4: k.keyLast4,
      createdAt: k.createdAt,
      rotateBy: k.rotateBy,
    })),
  };
}

export interface SettingsWrite {
  stored: StoredSettings;
  next: ProgramSettings;
  changes: SettingChanges;
  userId: number;
  now: Date;
}

/**
 * One transaction (one `db.batch`): guards that the program is as it was read and that the person is still
 * an active member, updates the program, replaces the per-product rules when they changed, and appends the
 * audit entry. A guard failure aborts the whole batch (the caller re-reads and decides again).
 */
export async function writeProgramSettings(db: Database, write: SettingsWrite): Promise<void> {
  const { stored, next, changes, userId, now } = write;
  const programId = stored.programId;
  const rulesChanged = changes.commission_rules !== undefined;
  const member = db.execute(sql`
    select guard(exists (select 1 from ${workspaceMembers}
                         where ${workspaceMembers.userId} = ${userId} and ${workspaceMembers.advertiserId} = ${stored.advertiserId}
                           and ${workspaceMembers.status} = 'active'), 'program membership')`);
  // Guarded on the version read: a concurrent change makes this match nothing, the guard raises and the
  // whole batch is rolled back (the caller re-reads). `updated_at` always moves forward, even when the
  // clock stands still, so the version changes with every write.
  const update = db.execute(sql`
    with changed as (
      update ${programs} set
        name = ${next.name},
        domain = ${next.domain},
        attribution_window_days = ${next.attributionWindowDays},
        lead_auth_policy = ${next.leadAuthPolicy},
        allowed_origins = array(select jsonb_array_elements_text(${JSON.stringify(next.allowedOrigins)}::jsonb)),
        commission_type = ${next.commissionType},
        commission_rate = ${next.commissionRate}::numeric,
        duration_months = ${next.durationMonths},
        hold_days = ${next.holdDays},
        stripe_account_id = ${next.stripeAccountId},
        hold_flagged_commissions = ${next.holdFlaggedCommissions},
        email_attribution_settled_only = ${next.emailAttributionSettledLeadsOnly},
        updated_at = greatest(${now.toISOString()}::timestamptz, ${programs.updatedAt} + interval '1 microsecond')
      where ${programs.id} = ${programId} and ${programs.updatedAt}::text = ${stored.version}
      returning 1
    )
    select guard(exists (select 1 from changed), 'program settings')`);
  const audit = db.insert(auditLog).values({
    advertiserId: stored.advertiserId,
    programId,
    actorUserId: userId,
    action: "program.settings_changed",
    changes,
    createdAt: now,
  });
  if (rulesChanged) {
    const clear = db.delete(commissionRules).where(eq(commissionRules.programId, programId));
    if (next.commissionRules.length > 0) {
      const insert = db.insert(commissionRules).values(
        next.commissionRules.map((r) => ({
          programId,
          productId: r.productId,
          commissionType: r.commissionType,
          commissionRate: r.commissionRate,
          durationMonths: r.durationMonths,
        })),
      );
      await db.batch([member, update, clear, insert, audit]);
    } else {
      await db.batch([member, update, clear, audit]);
    }
    return;
  }
  await db.batch([member, update, audit]);
}
