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
  const mac = await crypto.subtle.sign("HMAC", key, encoder.encode(`${purpose}:${value}`));
  return Array.from(new Uint8Array(mac), (b) => b.toString(16).padStart(2, "0")).join("");
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
    ua === null ? null : keyedHash(key, "ua", ua),
  ]);
  return { ipHash, uaHash };
}
