/**
 * Endpoint secrets at rest. The service must sign with them, so they cannot be hashed like API keys: with
 * `WEBHOOK_SECRET_KEY` set (production), they are sealed with AES-256-GCM under a key derived from it
 * (SHA-256), stored as `aesgcm:<iv>:<ciphertext>`; without it (local stack, tests) they are stored as
 * `plain:<secret>`, and `readConfig` logs nothing about it: the README says to set the key in production.
 * A sealed secret read without the key (or with another) fails loudly rather than signing with garbage.
 */
const encoder = new TextEncoder();

async function aesKey(keyMaterial: string): Promise<CryptoKey> {
  const digest = await crypto.subtle.digest("SHA-256", encoder.encode(keyMaterial));
  return crypto.subtle.importKey("raw", digest, { name: "AES-GCM" }, false, ["encrypt", "decrypt"]);
}

const b64 = (bytes: Uint8Array) => btoa(String.fromCharCode(...bytes));
const unb64 = (text: string) => Uint8Array.from(atob(text), (ch) => ch.charCodeAt(0));

export async function sealSecret(secret: string, keyMaterial: string | undefined): Promise<string> {
  if (!keyMaterial) return `plain:${secret}`;
  const iv = crypto.getRandomValues(new Uint8Array(12));
  const sealed = await crypto.subtle.encrypt(
    { name: "AES-GCM", iv },
    await aesKey(keyMaterial),
    encoder.encode(secret),
  );
  return `aesgcm:${b64(iv)}:${b64(new Uint8Array(sealed))}`;
}

export async function openSecret(stored: string, keyMaterial: string | undefined): Promise<string> {
  if (stored.startsWith("plain:")) return stored.slice("plain:".length);
  const [scheme, iv, body] = stored.split(":");
  if (scheme !== "aesgcm" || !iv || !body) throw new Error("unknown webhook secret format");
  if (!keyMaterial) throw new Error("webhook secret is sealed but WEBHOOK_SECRET_KEY is not set");
  const opened = await crypto.subtle.decrypt(
    { name: "AES-GCM", iv: unb64(iv) },
    await aesKey(keyMaterial),
    unb64(body),
  );
  return new TextDecoder().decode(opened);
}
