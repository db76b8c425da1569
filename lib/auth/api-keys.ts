import { bytesToHex } from "../hex.ts";
import { base64Url } from "../ids.ts";

/**
 * Program API keys: `sk_live_...` or `sk_test_...` with 192 random bits. Only the SHA-256 is stored (a
 * fast hash is right for high-entropy secrets) with a short display prefix; the key itself is shown once.
 */
export interface IssuedApiKey {
  key: string;
  keyHash: string;
  keyPrefix: string;
  /** The key's last four characters, stored to show the key masked (prefix ... last four). */
  keyLast4: string;
  isTest: boolean;
}

export async function issueApiKey(isTest: boolean): Promise<IssuedApiKey> {
  const key = `sk_${isTest ? "test" : "live"}_${base64Url(crypto.getRandomValues(new Uint8Array(24)))}`;
  return { key, keyHash: await sha256Hex(key), keyPrefix: key.slice(0, 12), keyLast4: key.slice(-4), isTest };
}

export async function sha256Hex(text: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text));
  return bytesToHex(new Uint8Array(digest));
}

/** How settings show a key: its display prefix and last four characters, never the rest. */
export function maskApiKey(keyPrefix: string, keyLast4: string | null): string {
  return `${keyPrefix}...${keyLast4 ?? ""}`;
}
