import { type Placeholder, sql } from "drizzle-orm";
import { programApiKeys } from "../../schema/programs.ts";
import type { Database } from "../db/client.ts";
import { fromDriver } from "../db/columns.ts";
import { preparedSql } from "../db/prepared-sql.ts";
import { type ApiError, platformError, typedError } from "../errors/api-error.ts";
import type { BearerHeader } from "./bearer.ts";

/** The stored facts about one API key, as read by a route's single read round trip. */
export interface ApiKeyRecord {
  programId: number;
  isTest: boolean;
  rotationMarkedAt: Date | null;
  rotateBy: Date | null;
}

export interface KeyRotation {
  markedAt: Date;
  rotateBy: Date;
}

export type KeyVerdict =
  | { ok: true; programId: number; isTest: boolean; rotation: KeyRotation | null }
  | { ok: false; error: ApiError };

/** The 401 wording differs per route (spec sections 5 and 7); each route names its own set. */
export interface KeyMessages {
  missing: string;
  empty: string;
  invalid: string;
  /** Readiness answers in the typed envelope with `invalid_key`; the other routes in the platform one. */
  envelope: "platform" | "typed";
}

export const saleKeyMessages: KeyMessages = {
  missing: "Missing or malformed Authorization header. Expected: Bearer <token>",
  empty: "Missing API token",
  invalid: "Invalid API token",
  envelope: "platform",
};

export const refundKeyMessages: KeyMessages = { ...saleKeyMessages, empty: "Empty Bearer token" };

/** Lead: only an unknown token is a 401 (absent or empty Bearer means browser mode). */
export const leadKeyMessages: KeyMessages = saleKeyMessages;

export const readinessKeyMessages: KeyMessages = {
  missing: "Missing or malformed Authorization header. Expected: Bearer <token>.",
  empty: "Missing API token.",
  invalid: "Invalid API token.",
  envelope: "typed",
};

function unauthorized(messages: KeyMessages, message: string): ApiError {
  return messages.envelope === "typed"
    ? typedError(401, "invalid_key", message)
    : platformError(401, message);
}

export function retiredKeyError(docsUrl: string): ApiError {
  return typedError(
    401,
    "api_key_rotation_required",
    "This API key was retired after its rotation deadline.",
    {
      hint: "Generate a new API key in the program settings and use it instead.",
      docs_url: docsUrl,
    },
  );
}

/** Why a Bearer header does not authenticate: each route words these its own way (`KeyMessages`). */
export type KeyRefusal = "missing" | "empty" | "unknown" | "retired";

export type KeyCheck =
  | { ok: true; programId: number; isTest: boolean; rotation: KeyRotation | null }
  | { ok: false; refusal: KeyRefusal };

/**
 * Decides what a Bearer header is worth. A key past its rotation deadline is refused (`retired`); a key
 * marked for rotation but still before the deadline authenticates and carries the rotation notice the
 * response must show. Pure: the refusal is a reason, worded by `keyRefusalError` at the entrance.
 */
export function checkApiKey(header: BearerHeader, record: ApiKeyRecord | null, now: Date): KeyCheck {
  if (header.kind === "absent" || header.kind === "malformed") return { ok: false, refusal: "missing" };
  if (header.kind === "empty") return { ok: false, refusal: "empty" };
  if (!record) return { ok: false, refusal: "unknown" };
  if (record.rotateBy && record.rotateBy.getTime() <= now.getTime()) return { ok: false, refusal: "retired" };
  const rotation =
    record.rotateBy !== null
      ? { markedAt: record.rotationMarkedAt ?? record.rotateBy, rotateBy: record.rotateBy }
      : null;
  return { ok: true, programId: record.programId, isTest: record.isTest, rotation };
}

/** The 401 of a key refusal in the route's wording; a retired key is the typed `api_key_rotation_required`. */
export function keyRefusalError(refusal: KeyRefusal, messages: KeyMessages, docsUrl: string): ApiError {
  switch (refusal) {
    case "missing":
      return unauthorized(messages, messages.missing);
    case "empty":
      return unauthorized(messages, messages.empty);
    case "unknown":
      return unauthorized(messages, messages.invalid);
    case "retired":
      return retiredKeyError(docsUrl);
  }
}

/** `checkApiKey` with the refusal already worded, for entrances that check the key themselves. */
export function evaluateApiKey(
  header: BearerHeader,
  record: ApiKeyRecord | null,
  now: Date,
  messages: KeyMessages,
  docsUrl: string,
): KeyVerdict {
  const check = checkApiKey(header, record, now);
  return check.ok ? check : { ok: false, error: keyRefusalError(check.refusal, messages, docsUrl) };
}

const apiKeyRecordStatement = preparedSql(["keyHash"], (p) => {
  const k = programApiKeys;
  return sql`
    select ${k.programId} as program_id, ${k.isTest} as is_test, ${k.rotationMarkedAt} as rotation_marked_at,
           ${k.rotateBy} as rotate_by
    from ${k}
    where ${k.keyHash} = ${p.keyHash}::text and ${k.revokedAt} is null`;
});

/**
 * A select of the key's record, for inclusion in a route's read batch. Revoked keys match nothing. A
 * placeholder as `keyHash` lets another prepared statement nest it.
 */
export function apiKeyRecordQuery(keyHash: string | null | Placeholder) {
  return apiKeyRecordStatement({ keyHash });
}

export function apiKeyRecordFromRow(
  row:
    | { program_id: number; is_test: boolean; rotation_marked_at: string | null; rotate_by: string | null }
    | undefined,
): ApiKeyRecord | null {
  if (!row) return null;
  const k = programApiKeys;
  return {
    programId: fromDriver(k.programId, row.program_id),
    isTest: fromDriver(k.isTest, row.is_test),
    rotationMarkedAt: row.rotation_marked_at ? fromDriver(k.rotationMarkedAt, row.rotation_marked_at) : null,
    rotateBy: row.rotate_by ? fromDriver(k.rotateBy, row.rotate_by) : null,
  };
}

type ApiKeyRow = Parameters<typeof apiKeyRecordFromRow>[0];

/** The key's record alone, in one round trip (for a route that has not read it with its facts). */
export async function readApiKeyRecord(db: Database, keyHash: string): Promise<ApiKeyRecord | null> {
  const { rows } = await db.execute(apiKeyRecordQuery(keyHash));
  return apiKeyRecordFromRow(rows[0] as ApiKeyRow);
}
