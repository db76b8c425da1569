import { sha256Hex } from "../auth/api-keys.ts";
import { base64Url } from "../ids.ts";

/** A login session lives 5 minutes (spec section 8); the tool polls every `pollIntervalSeconds`. */
export const loginSessionLifetimeMs = 5 * 60 * 1000;
export const pollIntervalSeconds = 2;

/**
 * Login tokens live 90 days: long enough that a developer's terminal stays signed in across a project,
 * short enough that a forgotten laptop's token dies by itself. `logout` revokes it at once.
 */
export const loginTokenLifetimeMs = 90 * 24 * 60 * 60 * 1000;
export const loginTokenPrefix = "atl_";

export interface IssuedSecret {
  value: string;
  hash: string;
}

/**
 * The session `state` (what the tool polls with), and the secret its sign-in link carries instead: 256
 * random bits each; only their SHA-256 is stored.
 */
export async function newLoginState(): Promise<IssuedSecret> {
  const value = base64Url(crypto.getRandomValues(new Uint8Array(32)));
  return { value, hash: await sha256Hex(value) };
}

/** An opaque login token, `atl_` + 256 random bits; only its SHA-256 and a display prefix are stored. */
export async function newLoginToken(): Promise<IssuedSecret & { prefix: string }> {
  const value = `${loginTokenPrefix}${base64Url(crypto.getRandomValues(new Uint8Array(32)))}`;
  return { value, hash: await sha256Hex(value), prefix: value.slice(0, 10) };
}

/** The short code printed beside the URL (`ABCD-EFGH`), so a person can tell the page is their own login. */
export function userCodeOf(stateHash: string): string {
  const alphabet = "BCDFGHJKLMNPQRSTVWXZ";
  let code = "";
  for (let i = 0; i < 8; i++) code += alphabet[Number.parseInt(stateHash.slice(i * 2, i * 2 + 2), 16) % 20];
  return `${code.slice(0, 4)}-${code.slice(4)}`;
}
