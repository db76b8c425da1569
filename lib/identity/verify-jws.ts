import { jwsAlgorithm } from "./jws-algorithms.ts";
import type { KeySet } from "./remote-key-set.ts";

/**
 * Verifies a JWS in compact serialization (RFC 7515: `header.payload.signature`, each base64url without
 * padding) with the issuer's keys, on WebCrypto, and returns the payload's bytes; null when anything is
 * wrong. Refused: not three base64url parts; a header that is not a JSON object with a string `alg`; an `alg`
 * that is `none`, HMAC or unknown, or not among `algorithms` when given; any `crit` (RFC 7515 4.1.11: we
 * understand no extension, and an ID token needs none); no key of the set that verifies the signature.
 * Key set failures (unreachable, malformed) are thrown.
 */
export async function verifyCompactJws(
  token: string,
  keys: KeySet,
  algorithms?: readonly string[],
): Promise<Uint8Array | null> {
  const parts = token.split(".");
  if (parts.length !== 3) return null;
  const [encodedHeader, encodedPayload, encodedSignature] = parts as [string, string, string];
  const header = jsonObject(decodeBase64Url(encodedHeader));
  const payload = decodeBase64Url(encodedPayload);
  const signature = decodeBase64Url(encodedSignature);
  if (!header || !payload || !signature) return null;

  const { alg, kid } = header;
  if (typeof alg !== "string" || header.crit !== undefined) return null;
  if (algorithms && !algorithms.includes(alg)) return null;
  const algorithm = jwsAlgorithm(alg);
  if (!algorithm) return null;

  const signingInput = new TextEncoder().encode(`${encodedHeader}.${encodedPayload}`);
  // Every key that fits: a token that names no `kid` may fit several keys of the set (jose refused such a
  // token outright; any of the issuer's keys is as good as another).
  for (const key of await keys.keysFor(alg, kid)) {
    const verified = await crypto.subtle
      .verify(algorithm.verifyAs, key, signature, signingInput)
      .catch(() => false);
    if (verified) return payload;
  }
  return null;
}

const BASE64URL = /^[A-Za-z0-9_-]*$/;

/** Strict base64url: its alphabet only, no padding, no length that cannot be whole bytes. */
export function decodeBase64Url(text: string): Uint8Array | null {
  if (!BASE64URL.test(text) || text.length % 4 === 1) return null;
  const binary = atob(text.replace(/-/g, "+").replace(/_/g, "/"));
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return bytes;
}

/** The bytes as a JSON object (UTF-8, strictly), or null: a JWS header and a JWT's claims are objects. */
export function jsonObject(bytes: Uint8Array | null): Record<string, unknown> | null {
  if (!bytes) return null;
  let value: unknown;
  try {
    value = JSON.parse(new TextDecoder("utf-8", { fatal: true, ignoreBOM: false }).decode(bytes));
  } catch {
    return null;
  }
  return typeof value === "object" && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : null;
}
