import { sha256Hex } from "../auth/api-keys.ts";

/**
 * Emails are kept only as a hash (to match a later payment's buyer email against the lead) and a masked
 * form (for people reading the dashboard). The clear address is never stored or logged.
 */
export interface StoredEmail {
  hash: string;
  masked: string;
}

const maxEmailLength = 254;
// Plausible, not RFC 5322: one @, no spaces, a dot in the domain. The provider's buyer email is matched
// against the hash, so all that matters is that the same address normalises the same way.
const plausibleEmail = /^[^\s@]+@[^\s@.]+(\.[^\s@.]+)+$/;

export function normalizeEmail(email: string): string {
  return email.trim().toLowerCase();
}

export function isPlausibleEmail(email: string): boolean {
  const normalized = normalizeEmail(email);
  return normalized.length <= maxEmailLength && plausibleEmail.test(normalized);
}

/** SHA-256 hex of the trimmed, lower-cased address. */
export function emailHash(email: string): Promise<string> {
  return sha256Hex(normalizeEmail(email));
}

/** `jane.doe@example.com` -> `j***@example.com`: the first character of the local part, then `***`. */
export function maskEmail(email: string): string {
  const normalized = normalizeEmail(email);
  const at = normalized.lastIndexOf("@");
  if (at <= 0) return "***";
  return `${normalized[0]}***${normalized.slice(at)}`;
}

export async function storedEmail(email: string): Promise<StoredEmail> {
  return { hash: await emailHash(email), masked: maskEmail(email) };
}
