/**
 * Standard Webhooks signatures (https://www.standardwebhooks.com): `v1,<base64 HMAC-SHA256>` of
 * `${id}.${timestamp}.${body}`, keyed with the base64 part of a `whsec_...` secret. During a rotation's
 * overlap the header carries one signature per secret, space-separated, so a receiver holding either verifies.
 */
export const secretPrefix = "whsec_";

function base64(bytes: Uint8Array): string {
  let binary = "";
  for (const b of bytes) binary += String.fromCharCode(b);
  return btoa(binary);
}

function fromBase64(text: string): Uint8Array {
  const binary = atob(text);
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return bytes;
}

/** A new secret: 32 random bytes (Standard Webhooks asks for 24 to 64). */
export function generateWebhookSecret(): string {
  return secretPrefix + base64(crypto.getRandomValues(new Uint8Array(32)));
}

async function signOne(secret: string, content: string): Promise<string> {
  const key = await crypto.subtle.importKey(
    "raw",
    fromBase64(secret.slice(secretPrefix.length)),
    { name: "HMAC", hash: "SHA-256" },
    false,
    ["sign"],
  );
  const mac = await crypto.subtle.sign("HMAC", key, new TextEncoder().encode(content));
  return `v1,${base64(new Uint8Array(mac))}`;
}

export interface SignedHeaders {
  "webhook-id": string;
  "webhook-timestamp": string;
  "webhook-signature": string;
}

/** The three headers of one delivery; `secrets` is the current secret, then any still in its overlap. */
export async function signWebhook(
  secrets: readonly string[],
  message: { id: string; timestamp: Date; body: string },
): Promise<SignedHeaders> {
  const seconds = Math.floor(message.timestamp.getTime() / 1000);
  const content = `${message.id}.${seconds}.${message.body}`;
  const signatures = await Promise.all(secrets.map((s) => signOne(s, content)));
  return {
    "webhook-id": message.id,
    "webhook-timestamp": String(seconds),
    "webhook-signature": signatures.join(" "),
  };
}
