import { isPlausibleEmail, normalizeEmail } from "../tracking/email.ts";
import { hasControlCharacter } from "../validation/storable-text.ts";
import { unknownField } from "../validation/unknown-field.ts";
import { SYNTHETIC_LINK_PREFIX } from "./synthetic-link-code.ts";

/** Pure checks of the partner and referral link bodies; each failure names its field. */
export type Checked<T> = { ok: true; value: T } | { ok: false; field: string; message: string };

export const SHORT_LINK_MESSAGE =
  "short_link must be 3 to 64 characters (letters, digits, '-' or '_'), starting with a letter or digit";
export const PARTNER_ID_MESSAGE = "partner_id must be an active partner of this program";
export const ACTIVE_MESSAGE = "active must be true or false";
export const RESERVED_SHORT_LINK_MESSAGE = `short_link must not start with ${SYNTHETIC_LINK_PREFIX} (reserved for the verification chain's link)`;
const shortLinkPattern = /^[A-Za-z0-9][A-Za-z0-9_-]{2,63}$/;

export function checkPartner(body: Record<string, unknown>): Checked<{ name: string; email: string }> {
  const unknown = unknownField(body, ["name", "email"]);
  if (unknown) return { ok: false, ...unknown };
  const { name, email } = body;
  if (
    typeof name !== "string" ||
    name.trim() === "" ||
    name.trim().length > 200 ||
    hasControlCharacter(name)
  ) {
    return { ok: false, field: "name", message: "name must be a non-empty string of at most 200 characters" };
  }
  // `.invalid` is reserved and never delivers (RFC 6761); refusing it also keeps the verification chain's
  // own partner (`synthetic-verification+p<id>@fixtures.invalid`, one person across the service) out of
  // reach of brands, who could otherwise create it first under a name of their choosing.
  if (typeof email !== "string" || !isPlausibleEmail(email) || /\.invalid$/i.test(email.trim())) {
    return { ok: false, field: "email", message: "email must be an email address" };
  }
  return { ok: true, value: { name: name.trim(), email: normalizeEmail(email) } };
}

/**
 * `short_link` is the `aff`/`via` value of the partner's URLs: unique across the service (a click finds its
 * link by it alone), compared exactly. Omitted: the service makes one (10 random lower-case letters and digits).
 */
export function checkNewLink(
  body: Record<string, unknown>,
): Checked<{ partnerId: number; shortLink: string | null }> {
  const unknown = unknownField(body, ["partner_id", "short_link"]);
  if (unknown) return { ok: false, ...unknown };
  const partnerId = body.partner_id;
  if (
    typeof partnerId !== "number" ||
    !Number.isInteger(partnerId) ||
    partnerId < 1 ||
    partnerId > 2_147_483_647
  ) {
    return { ok: false, field: "partner_id", message: PARTNER_ID_MESSAGE };
  }
  if (body.short_link === undefined) return { ok: true, value: { partnerId, shortLink: null } };
  if (typeof body.short_link !== "string" || !shortLinkPattern.test(body.short_link)) {
    return { ok: false, field: "short_link", message: SHORT_LINK_MESSAGE };
  }
  if (body.short_link.startsWith(SYNTHETIC_LINK_PREFIX)) {
    return { ok: false, field: "short_link", message: RESERVED_SHORT_LINK_MESSAGE };
  }
  return { ok: true, value: { partnerId, shortLink: body.short_link } };
}

export function checkLinkState(body: Record<string, unknown>): Checked<boolean> {
  const unknown = unknownField(body, ["active"]);
  if (unknown) return { ok: false, ...unknown };
  if (typeof body.active !== "boolean") return { ok: false, field: "active", message: ACTIVE_MESSAGE };
  return { ok: true, value: body.active };
}

const alphabet = "abcdefghijklmnopqrstuvwxyz0123456789";

export function generateShortLink(): string {
  return [...crypto.getRandomValues(new Uint8Array(10))].map((byte) => alphabet[byte % 36]).join("");
}
