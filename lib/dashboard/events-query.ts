/**
 * The query of the dashboard's event feed (`GET /api/tracking/events/:programId`), validated without the
 * database: which kinds, live or test, how many, and where the previous page ended (an opaque cursor).
 */
export const eventKinds = ["click", "lead", "sale", "refund"] as const;
export type EventKind = (typeof eventKinds)[number];

export const eventModes = ["all", "live", "test"] as const;
export type EventMode = (typeof eventModes)[number];

export const defaultEventLimit = 50;
export const maxEventLimit = 100;

/** Where a page ended: the last event's time (microseconds, UTC text), kind and row id. */
export interface EventCursor {
  at: string;
  kind: EventKind;
  id: number;
}

export interface EventsQuery {
  kinds: EventKind[];
  mode: EventMode;
  limit: number;
  cursor: EventCursor | null;
}

export interface InvalidParameter {
  parameter: string;
  message: string;
}

const knownParameters = ["kind", "mode", "limit", "cursor"] as const;
const cursorAtPattern = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/;

/** The feed's order within one instant: kinds in this order (newest first means the highest rank first). */
export const kindRank: Record<EventKind, number> = { click: 1, lead: 2, sale: 3, refund: 4 };

export function encodeCursor(cursor: EventCursor): string {
  return btoa(JSON.stringify([cursor.at, cursor.kind, cursor.id]))
    .replace(/\+/g, "-")
    .replace(/\//g, "_")
    .replace(/=+$/, "");
}

export function decodeCursor(text: string): EventCursor | null {
  if (text.length === 0 || text.length > 200 || !/^[A-Za-z0-9_-]+$/.test(text)) return null;
  let value: unknown;
  try {
    value = JSON.parse(atob(text.replace(/-/g, "+").replace(/_/g, "/")));
  } catch {
    return null;
  }
  if (!Array.isArray(value) || value.length !== 3) return null;
  const [at, kind, id] = value as unknown[];
  if (typeof at !== "string" || !cursorAtPattern.test(at) || Number.isNaN(Date.parse(at))) return null;
  if (typeof kind !== "string" || !(eventKinds as readonly string[]).includes(kind)) return null;
  if (typeof id !== "number" || !Number.isSafeInteger(id) || id < 1) return null;
  return { at, kind: kind as EventKind, id };
}

export function parseEventsQuery(
  params: Record<string, string>,
): { ok: true; query: EventsQuery } | { ok: false; error: InvalidParameter } {
  const fail = (parameter: string, message: string) => ({
    ok: false as const,
    error: { parameter, message },
  });
  for (const name of Object.keys(params)) {
    if (!(knownParameters as readonly string[]).includes(name)) {
      return fail(name, `Unknown parameter ${name.slice(0, 40)}. Known: ${knownParameters.join(", ")}.`);
    }
  }
  let kinds: EventKind[] = [...eventKinds];
  if (params.kind !== undefined) {
    const listed = params.kind.split(",").map((k) => k.trim());
    if (listed.some((k) => !(eventKinds as readonly string[]).includes(k))) {
      return fail("kind", `kind must be a comma-separated list of: ${eventKinds.join(", ")}.`);
    }
    kinds = eventKinds.filter((k) => listed.includes(k));
  }
  const mode = params.mode ?? "all";
  if (!(eventModes as readonly string[]).includes(mode)) {
    return fail("mode", `mode must be one of: ${eventModes.join(", ")}.`);
  }
  const limitText = params.limit ?? String(defaultEventLimit);
  const limit = /^\d{1,3}$/.test(limitText) ? Number(limitText) : Number.NaN;
  if (!(limit >= 1 && limit <= maxEventLimit)) {
    return fail("limit", `limit must be a whole number from 1 to ${maxEventLimit}.`);
  }
  let cursor: EventCursor | null = null;
  if (params.cursor !== undefined) {
    cursor = decodeCursor(params.cursor);
    if (!cursor) return fail("cursor", "cursor must be the next_cursor of a previous page.");
  }
  return { ok: true, query: { kinds, mode: mode as EventMode, limit, cursor } };
}
