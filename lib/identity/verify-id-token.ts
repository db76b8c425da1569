import type { KeySet } from "./remote-key-set.ts";
import { jsonObject, verifyCompactJws } from "./verify-jws.ts";

/**
 * Verifies an OpenID Connect ID token against the issuer's published keys: signature (and its algorithm when
 * the issuer announced them; `verify-jws.ts`), `iss`, `aud` (and `azp` when there are several audiences),
 * `exp` and `iat` (with a small clock skew), `nbf` when present, and `nonce` when the flow set one. The claim
 * checks are those `jose`'s `jwtVerify` made with the options this module passed it before it replaced
 * `jose` (in the same order, so a token wrong in several ways gets the same reason). Returns the person's
 * provider email facts, or a typed reason; never an HTTP error.
 */
export interface IdTokenClaims {
  subject: string;
  email: string | null;
  emailVerified: boolean;
}

export type IdTokenVerdict =
  | { ok: true; claims: IdTokenClaims }
  | { ok: false; reason: "invalid_id_token" | "expired_id_token" | "nonce_mismatch" };

export interface IdTokenExpectations {
  issuer: string;
  audience: string;
  keys: KeySet;
  /** The nonce the flow sent in its authorization request; omitted when the flow sent none. */
  nonce?: string;
  /** The signing algorithms the issuer announced (discovery); omitted: any the issuer's keys allow. */
  algorithms?: string[];
  now: Date;
}

/** Providers' and our clocks drift a little; a minute is the usual allowance. */
export const ID_TOKEN_CLOCK_SKEW_SECONDS = 60;
/** An ID token is evidence of a fresh sign-in: refuse one issued long ago even if its `exp` is generous. */
export const ID_TOKEN_MAX_AGE_SECONDS = 15 * 60;

type Refusal = Extract<IdTokenVerdict, { ok: false }>;
const invalid: Refusal = { ok: false, reason: "invalid_id_token" };
const expired: Refusal = { ok: false, reason: "expired_id_token" };

/** `nbf`, `exp` and `iat` against `now` (seconds); `exp` and `iat` are required. */
function timeRefusal(claims: Record<string, unknown>, now: number): Refusal | null {
  const { iat, nbf, exp } = claims;
  const skew = ID_TOKEN_CLOCK_SKEW_SECONDS;
  if (typeof iat !== "number" || typeof exp !== "number") return invalid;
  if (nbf !== undefined && (typeof nbf !== "number" || nbf > now + skew)) return invalid;
  if (exp <= now - skew) return expired;
  // Issued too long ago counts as expired (jose's JWTExpired); issued in the future is a broken token.
  if (now - iat - skew > ID_TOKEN_MAX_AGE_SECONDS) return expired;
  if (now - iat < -skew) return invalid;
  return null;
}

export async function verifyIdToken(token: string, expect: IdTokenExpectations): Promise<IdTokenVerdict> {
  let payload: Record<string, unknown> | null;
  try {
    payload = jsonObject(await verifyCompactJws(token, expect.keys, expect.algorithms));
  } catch {
    // The key set could not be fetched: the token cannot be checked.
    return invalid;
  }
  if (!payload || typeof payload.sub !== "string" || payload.iss !== expect.issuer) return invalid;
  const { aud } = payload;
  if (!(aud === expect.audience || (Array.isArray(aud) && aud.includes(expect.audience)))) return invalid;
  const refusal = timeRefusal(payload, Math.floor(expect.now.getTime() / 1000));
  if (refusal) return refusal;
  // OIDC Core 3.1.3.7: a token for several audiences names the one it was issued to (azp), which must be us.
  if (Array.isArray(aud) && aud.length > 1 && payload.azp !== expect.audience) return invalid;
  if (expect.nonce !== undefined && payload.nonce !== expect.nonce)
    return { ok: false, reason: "nonce_mismatch" };
  const email =
    typeof payload.email === "string" && payload.email.trim() !== "" ? payload.email.trim() : null;
  // Some providers send the flag as the string "true".
  const emailVerified = payload.email_verified === true || payload.email_verified === "true";
  return { ok: true, claims: { subject: payload.sub, email, emailVerified } };
}
