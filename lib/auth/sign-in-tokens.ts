import { base64Url } from "../ids.ts";
import { sha256Hex } from "./api-keys.ts";

/**
 * Dashboard sign-in tokens: `dst_` + 256 random bits (base64url). Opaque; only the SHA-256 is stored.
 * Lifetime: sliding, 7 days since last use, never beyond 30 days after sign-in; sign-out revokes.
 * The page carries it in the `__Host-` cookie below (HttpOnly, Secure, SameSite=Lax, Path=/), API callers
 * as `Authorization: Bearer`. The prefix tells it apart from a program API key (`sk_live_`, `sk_test_`),
 * which is refused where a sign-in token is required, and the reverse.
 */
export const SIGN_IN_TOKEN_PREFIX = "dst_";
export const SESSION_COOKIE = "__Host-affiliate_session";
export const SLIDING_LIFETIME_SECONDS = 7 * 24 * 3600;
export const ABSOLUTE_LIFETIME_SECONDS = 30 * 24 * 3600;

export interface IssuedSignInToken {
  token: string;
  tokenHash: string;
}

export async function issueSignInToken(): Promise<IssuedSignInToken> {
  const token = `${SIGN_IN_TOKEN_PREFIX}${base64Url(crypto.getRandomValues(new Uint8Array(32)))}`;
  return { token, tokenHash: await sha256Hex(token) };
}

export function isProgramApiKey(token: string): boolean {
  return token.startsWith("sk_live_") || token.startsWith("sk_test_");
}

export function sessionCookie(token: string, maxAgeSeconds: number): string {
  return `${SESSION_COOKIE}=${token}; Path=/; HttpOnly; Secure; SameSite=Lax; Max-Age=${maxAgeSeconds}`;
}

export function clearedSessionCookie(): string {
  return `${SESSION_COOKIE}=; Path=/; HttpOnly; Secure; SameSite=Lax; Max-Age=0`;
}

/** The value of one cookie in a `Cookie` header, or undefined. */
export function cookieValue(header: string | undefined, name: string): string | undefined {
  if (!header) return undefined;
  for (const part of header.split(";")) {
    const eq = part.indexOf("=");
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim() || undefined;
  }
  return undefined;
}
