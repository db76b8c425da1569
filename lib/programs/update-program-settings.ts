import { programStripeAccountUniqueIndex } from "../../schema/programs.ts";
import { requireProgramMembership } from "../auth/require-program-membership.ts";
import type { Database } from "../db/client.ts";
import { isUniqueViolation, withConflictRetry } from "../db/errors.ts";
import { decideSettingsChange, type SettingField } from "./decide-settings-change.ts";
import { readProgramSettings, type StoredSettings, writeProgramSettings } from "./settings-store.ts";

export type UpdateSettingsResult =
  | { ok: true; stored: StoredSettings; changed: SettingField[] }
  | { ok: false; reason: "no_access" }
  | { ok: false; reason: "invalid"; field: string; message: string }
  | { ok: false; reason: "account_taken" };

export interface UpdateSettingsInput {
  userId: number;
  programId: number | undefined;
  body: Record<string, unknown>;
  now: Date;
}

/**
 * `PATCH /api/v1/programs/:id/settings`: read (membership, then the program) -> decide (pure) -> write
 * (one guarded transaction with its audit entry), re-run when a concurrent change won the race. A body
 * that changes nothing writes nothing and records no audit entry.
 */
export async function updateProgramSettings(
  db: Database,
  input: UpdateSettingsInput,
): Promise<UpdateSettingsResult> {
  return withConflictRetry(
    async () => {
      const membership = await requireProgramMembership(db, input.userId, input.programId);
      if (!membership.ok || input.programId === undefined) return { ok: false, reason: "no_access" };
      const stored = await readProgramSettings(db, input.programId);
      if (!stored) return { ok: false, reason: "no_access" };
      const decision = decideSettingsChange(stored.settings, input.body);
      if (!decision.ok)
        return { ok: false, reason: "invalid", field: decision.field, message: decision.message };
      const changed = Object.keys(decision.changes) as SettingField[];
      if (changed.length === 0) return { ok: true, stored, changed };
      try {
        await writeProgramSettings(db, {
          stored,
          next: decision.next,
          changes: decision.changes,
          userId: input.userId,
          now: input.now,
        });
      } catch (error) {
        if (isUniqueViolation(error, programStripeAccountUniqueIndex))
          return { ok: false, reason: "account_taken" };
        throw error;
      }
      return { ok: true, stored: { ...stored, settings: decision.next }, changed };
      // Each round of contenders lets at least one through; a dashboard's bursts stay well within this.
    },
    { attempts: 16 },
  );
}
