import type { BearerHeader } from "../auth/bearer.ts";
import {
  apiKeyRecordFromRow,
  apiKeyRecordQuery,
  evaluateApiKey,
  type KeyRotation,
} from "../auth/program-key.ts";
import type { Database } from "../db/client.ts";
import type { ApiError } from "../errors/api-error.ts";
import {
  type IntegrationStatus,
  integrationStatusFrom,
  integrationStatusQuery,
} from "./integration-status.ts";
import { cliKeyMessages, programOfKey } from "./program-key-auth.ts";

export type StatusResult =
  | { outcome: "refused"; error: ApiError }
  | { outcome: "status"; status: IntegrationStatus; isTestKey: boolean; rotation: KeyRotation | null };

/** `status`: the key and the program's integration status in one round trip (one batch of reads). */
export async function getStatus(
  db: Database,
  input: { header: BearerHeader; keyHash: string; now: Date; docsUrl: string },
): Promise<StatusResult> {
  const [keyRows, statusRows] = await db.batch([
    db.execute(apiKeyRecordQuery(input.keyHash)),
    integrationStatusQuery(db, programOfKey(input.keyHash)),
  ]);
  const record = apiKeyRecordFromRow(keyRows.rows[0] as Parameters<typeof apiKeyRecordFromRow>[0]);
  const verdict = evaluateApiKey(input.header, record, input.now, cliKeyMessages, input.docsUrl);
  if (!verdict.ok) return { outcome: "refused", error: verdict.error };
  const row = statusRows.rows[0];
  if (!row) throw new Error("the key's program has no row");
  return {
    outcome: "status",
    status: integrationStatusFrom(row),
    isTestKey: verdict.isTest,
    rotation: verdict.rotation,
  };
}
