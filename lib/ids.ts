/**
 * Click ids are made in the worker, not by a database sequence, so a click can be answered before its row
 * is written. 128 random bits, base64url: unguessable and safe in cookies and URLs.
 */
export function newClickId(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return `clk_${base64Url(bytes)}`;
}

/** Request ids: short, random, log-friendly. */
export function newRequestId(): string {
  return `req_${base64Url(crypto.getRandomValues(new Uint8Array(12)))}`;
}

const BASE64URL_ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

/**
 * RFC 4648 base64url without padding. Written out rather than `btoa` plus three regular-expression
 * replacements: every request makes one (its id) and every click another, and that path cost about 20 µs of
 * worker CPU per click (`npm run bench:profile -- click`).
 */
export function base64Url(bytes: Uint8Array): string {
  let out = "";
  let i = 0;
  for (; i + 2 < bytes.length; i += 3) {
    const n = ((bytes[i] as number) << 16) | ((bytes[i + 1] as number) << 8) | (bytes[i + 2] as number);
    out +=
      BASE64URL_ALPHABET.charAt(n >> 18) +
      BASE64URL_ALPHABET.charAt((n >> 12) & 63) +
      BASE64URL_ALPHABET.charAt((n >> 6) & 63) +
      BASE64URL_ALPHABET.charAt(n & 63);
  }
  const left = bytes.length - i;
  if (left === 1) {
    const n = (bytes[i] as number) << 16;
    out += BASE64URL_ALPHABET.charAt(n >> 18) + BASE64URL_ALPHABET.charAt((n >> 12) & 63);
  } else if (left === 2) {
    const n = ((bytes[i] as number) << 16) | ((bytes[i + 1] as number) << 8);
    out +=
      BASE64URL_ALPHABET.charAt(n >> 18) +
      BASE64URL_ALPHABET.charAt((n >> 12) & 63) +
      BASE64URL_ALPHABET.charAt((n >> 6) & 63);
  }
  return out;
}
