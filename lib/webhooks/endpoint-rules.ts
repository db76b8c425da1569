import { unknownField } from "../validation/unknown-field.ts";
import { type WebhookEventType, webhookEventTypes } from "./event-types.ts";

/** Pure checks of the endpoint routes' bodies; each refusal's message names the field. */
export type Checked<T> = { ok: true; value: T } | { ok: false; message: string };

export const messages = {
  url: "url must be an https URL (http only for localhost) of at most 2048 characters",
  events: `events must be a non-empty list of: ${webhookEventTypes.join(", ")}`,
  enabled: "enabled must be a boolean",
  description: "description must be a string of at most 200 characters, or null",
  overlap: "overlap_hours must be an integer from 0 to 72",
  empty: "Send at least one of: url, events, enabled, description",
} as const;

const endpointFields = ["url", "events", "enabled", "description"] as const;

const loopback = new Set(["localhost", "127.0.0.1", "[::1]"]);

export function checkUrl(value: unknown): Checked<string> {
  if (typeof value !== "string" || value.length > 2048) return { ok: false, message: messages.url };
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return { ok: false, message: messages.url };
  }
  const allowed = url.protocol === "https:" || (url.protocol === "http:" && loopback.has(url.hostname));
  if (!allowed || url.username || url.password) return { ok: false, message: messages.url };
  return { ok: true, value: url.toString() };
}

export function checkEvents(value: unknown): Checked<WebhookEventType[]> {
  if (!Array.isArray(value) || value.length === 0) return { ok: false, message: messages.events };
  const known = new Set<string>(webhookEventTypes);
  if (!value.every((v) => typeof v === "string" && known.has(v)))
    return { ok: false, message: messages.events };
  return { ok: true, value: [...new Set(value as WebhookEventType[])] };
}

export function checkDescription(value: unknown): Checked<string | null> {
  if (value === null) return { ok: true, value: null };
  if (typeof value !== "string" || value.length > 200) return { ok: false, message: messages.description };
  return { ok: true, value };
}

export interface EndpointChange {
  url?: string;
  events?: WebhookEventType[];
  enabled?: boolean;
  description?: string | null;
}

/** A create body (url and events required) or a patch body (at least one field). */
export function checkEndpointBody(
  body: Record<string, unknown>,
  mode: "create" | "update",
): Checked<EndpointChange> {
  const unknown = unknownField(body, endpointFields);
  if (unknown) return { ok: false, message: unknown.message };
  const change: EndpointChange = {};
  if (mode === "create" || body.url !== undefined) {
    const url = checkUrl(body.url);
    if (!url.ok) return url;
    change.url = url.value;
  }
  if (mode === "create" || body.events !== undefined) {
    const events = checkEvents(body.events);
    if (!events.ok) return events;
    change.events = events.value;
  }
  if (body.enabled !== undefined) {
    if (typeof body.enabled !== "boolean") return { ok: false, message: messages.enabled };
    change.enabled = body.enabled;
  }
  if (body.description !== undefined) {
    const description = checkDescription(body.description);
    if (!description.ok) return description;
    change.description = description.value;
  }
  if (mode === "update" && Object.keys(change).length === 0) return { ok: false, message: messages.empty };
  return { ok: true, value: change };
}

/** The rotation body: `overlap_hours` only. */
export function checkOverlapHours(body: Record<string, unknown>): Checked<number> {
  const unknown = unknownField(body, ["overlap_hours"]);
  if (unknown) return { ok: false, message: unknown.message };
  const value = body.overlap_hours;
  if (value === undefined) return { ok: true, value: 24 };
  if (typeof value !== "number" || !Number.isInteger(value) || value < 0 || value > 72)
    return { ok: false, message: messages.overlap };
  return { ok: true, value };
}
