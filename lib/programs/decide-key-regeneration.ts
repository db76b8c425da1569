import { unknownField } from "../validation/unknown-field.ts";

/**
 * Pure: what a key regeneration asks for. `mode: immediate` retires the old key at once; `mode: rotate`
 * keeps it working until `rotate_by` (after now, at most 90 days ahead), while every response to it carries
 * the spec's Deprecation/Sunset headers and `warnings`, then refuses it with `api_key_rotation_required`.
 */
export type KeyRegeneration =
  | { ok: true; isTest: boolean; mode: "immediate"; rotateBy: null }
  | { ok: true; isTest: boolean; mode: "rotate"; rotateBy: Date }
  | { ok: false; field: string; message: string };

export const MAX_ROTATION_DAYS = 90;
export const ROTATE_BY_MESSAGE = `rotate_by must be an ISO 8601 time with offset, after now and at most ${MAX_ROTATION_DAYS} days ahead`;
const isoWithOffset = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/;

export function decideKeyRegeneration(body: Record<string, unknown>, now: Date): KeyRegeneration {
  const unknown = unknownField(body, ["key", "mode", "rotate_by"]);
  if (unknown) return { ok: false, ...unknown };
  const key = body.key ?? "live";
  if (key !== "live" && key !== "test")
    return { ok: false, field: "key", message: "key must be live or test" };
  const isTest = key === "test";
  if (body.mode === "immediate") {
    if (body.rotate_by !== undefined) {
      return { ok: false, field: "rotate_by", message: "rotate_by is only for mode rotate" };
    }
    return { ok: true, isTest, mode: "immediate", rotateBy: null };
  }
  if (body.mode !== "rotate")
    return { ok: false, field: "mode", message: "mode must be immediate or rotate" };
  const value = body.rotate_by;
  if (typeof value !== "string" || !isoWithOffset.test(value)) {
    return { ok: false, field: "rotate_by", message: ROTATE_BY_MESSAGE };
  }
  const rotateBy = new Date(value);
  const ahead = rotateBy.getTime() - now.getTime();
  if (Number.isNaN(ahead) || ahead <= 0 || ahead > MAX_ROTATION_DAYS * 86_400_000) {
    return { ok: false, field: "rotate_by", message: ROTATE_BY_MESSAGE };
  }
  return { ok: true, isTest, mode: "rotate", rotateBy };
}
