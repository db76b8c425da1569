import { createRemoteJWKSet, errors, type JWTVerifyGetKey, jwtVerify } from "jose";

/**
 * Verifies an OpenID Connect ID token with `jose` against the issuer's published keys: signature (and its
 * algorithm when the issuer announced them), `iss`, `aud` (and `azp` when there are several audiences), `exp`
 * and `iat` (with a small clock skew), and `nonce` when the flow set one. Returns the person's
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
  keys: JWTVerifyGetKey;
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

export async function verifyIdToken(token: string, expect: IdTokenExpectations): Promise<IdTokenVerdict> {
  let payload: Record<string, unknown>;
  try {
    ({ payload } = await jwtVerify(token, expect.keys, {
      issuer: expect.issuer,
      audience: expect.audience,
      clockTolerance: ID_TOKEN_CLOCK_SKEW_SECONDS,
      maxTokenAge: ID_TOKEN_MAX_AGE_SECONDS,
      currentDate: expect.now,
      requiredClaims: ["sub", "iat", "exp"],
      ...(expect.algorithms ? { algorithms: expect.algorithms } : {}),
    }));
  } catch (error) {
    if (error instanceof errors.JWTExpired) return { ok: false, reason: "expired_id_token" };
    return { ok: false, reason: "invalid_id_token" };
  }
  if (typeof payload.sub !== "string") return { ok: false, reason: "invalid_id_token" };
  // OIDC Core 3.1.3.7: a token for several audiences names the one it was issued to (azp), which must be us.
  if (Array.isArray(payload.aud) && payload.aud.length > 1 && payload.azp !== expect.audience)
    return { ok: false, reason: "invalid_id_token" };
  if (expect.nonce !== undefined && payload.nonce !== expect.nonce)
    return { ok: false, reason: "nonce_mismatch" };
  const email =
    typeof payload.email === "string" && payload.email.trim() !== "" ? payload.email.trim() : null;
  // Some providers send the flag as the string "true".
  const emailVerified = payload.email_verified === true || payload.email_verified === "true";
  return { ok: true, claims: { subject: payload.sub, email, emailVerified } };
}

// Per isolate: jose caches the fetched key set and refetches on an unknown `kid` (key rotation).
const keySets = new Map<string, JWTVerifyGetKey>();

export function remoteKeySet(jwksUri: string): JWTVerifyGetKey {
  let keys = keySets.get(jwksUri);
  if (!keys) {
    keys = createRemoteJWKSet(new URL(jwksUri), { timeoutDuration: 5000, cooldownDuration: 30_000 });
    keySets.set(jwksUri, keys);
  }
  return keys;
}
