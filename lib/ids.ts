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

export function base64Url(bytes: Uint8Array): string {
  let binary = "";
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}
