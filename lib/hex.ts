const BYTE_HEX = Array.from({ length: 256 }, (_, byte) => byte.toString(16).padStart(2, "0"));

/**
 * Lower-case hex of the bytes, by table: the key hashes and device hashes of every tracking request go through
 * it, and spreading, mapping and padding each byte cost tens of µs of worker CPU per sale
 * (`npm run bench:profile -- sale`).
 */
export function bytesToHex(bytes: Uint8Array): string {
  let hex = "";
  for (const byte of bytes) hex += BYTE_HEX[byte];
  return hex;
}
