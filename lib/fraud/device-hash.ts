import { bytesToHex } from "../hex.ts";
import { rootLogger } from "../log.ts";

/**
 * The device of a click or a browser lead, kept only as keyed hashes (HMAC-SHA256 with `DEVICE_HASH_KEY`) of
 * the client address and of the user agent: enough to see that two events came from one device, never the
 * address itself, and not reversible by hashing a list of addresses without the key.
 */
export interface DeviceHashes {
  ipHash: string | null;
  uaHash: string | null;
}

const encoder = new TextEncoder();

// Importing the key costs more than signing with it: once per isolate (and per key, should it change).
let cachedKey: { secret: string; key: Promise<CryptoKey> } | undefined;

function hmacKey(secret: string): Promise<CryptoKey> {
  if (cachedKey?.secret !== secret) {
    const key = crypto.subtle.importKey(
      "raw",
      encoder.encode(secret),
      { name: "HMAC", hash: "SHA-256" },
      false,
      ["sign"],
    );
    // A failed import is not cached: the next request tries again.
    key.catch(() => {
      if (cachedKey?.key === key) cachedKey = undefined;
    });
    cachedKey = { secret, key };
  }
  return cachedKey.key;
}

async function keyedHash(key: CryptoKey, purpose: string, value: string): Promise<string> {
  // The purpose prefix keeps an address and a user agent that happen to be equal from hashing alike.
  return bytesToHex(
    new Uint8Array(await crypto.subtle.sign("HMAC", key, encoder.encode(`${purpose}:${value}`))),
  );
}

/**
 * User agents repeat (a few browser versions make most traffic), so their hashes are kept per isolate and
 * key: one HMAC per click instead of two (about 25 µs of worker CPU, `npm run bench:profile -- click`).
 * Bounded: cleared when full, so a flood of invented user agents costs memory only up to the cap.
 */
const USER_AGENT_HASHES_CAP = 512;
let userAgentHashes: { key: CryptoKey; hashes: Map<string, Promise<string>> } | undefined;

function userAgentHash(key: CryptoKey, userAgent: string): Promise<string> {
  if (userAgentHashes?.key !== key) userAgentHashes = { key, hashes: new Map() };
  const { hashes } = userAgentHashes;
  let hash = hashes.get(userAgent);
  if (hash === undefined) {
    if (hashes.size >= USER_AGENT_HASHES_CAP) hashes.clear();
    hash = keyedHash(key, "ua", userAgent);
    hashes.set(userAgent, hash);
    // A failed hash is not kept: the next request tries again.
    hash.catch(() => hashes.delete(userAgent));
  }
  return hash;
}

let missingKeyReported = false;

/**
 * Hashes of the client address and user agent; an unknown address or an absent user agent hashes to null.
 * Without a key (`DEVICE_HASH_KEY` unset) both are null, and the worker says so once per isolate: the event is
 * recorded as usual, the fraud scan just has no device signal for it.
 */
export async function deviceHashes(
  secret: string | undefined,
  clientIp: string | null,
  userAgent: string | null,
): Promise<DeviceHashes> {
  const ip = clientIp?.trim() || null;
  const ua = userAgent?.trim() || null;
  if ((ip === null || ip === "unknown") && ua === null) return { ipHash: null, uaHash: null };
  if (secret === undefined) {
    if (!missingKeyReported) {
      missingKeyReported = true;
      rootLogger.error(
        "DEVICE_HASH_KEY is not set: clicks and browser leads are stored without device hashes",
      );
    }
    return { ipHash: null, uaHash: null };
  }
  const key = await hmacKey(secret);
  const [ipHash, uaHash] = await Promise.all([
    ip === null || ip === "unknown" ? null : keyedHash(key, "ip", ip),
    ua === null ? null : userAgentHash(key, ua),
  ]);
  return { ipHash, uaHash };
}
