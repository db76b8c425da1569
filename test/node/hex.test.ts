import { describe, expect, it } from "vitest";
import { sha256Hex } from "../../lib/auth/api-keys.ts";
import { bytesToHex } from "../../lib/hex.ts";

/** Key hashes and device hashes are stored as this hex: it must be the usual lower-case, two digits a byte. */
describe("bytesToHex", () => {
  it("agrees with Node's hex on every byte value and on random bytes", () => {
    const every = Uint8Array.from({ length: 256 }, (_, i) => i);
    expect(bytesToHex(every)).toBe(Buffer.from(every).toString("hex"));
    for (let length = 0; length <= 40; length++) {
      const bytes = crypto.getRandomValues(new Uint8Array(length));
      expect(bytesToHex(bytes)).toBe(Buffer.from(bytes).toString("hex"));
    }
  });

  it("gives the SHA-256 of FIPS 180-2's test vector for key hashes", async () => {
    expect(await sha256Hex("abc")).toBe("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  });
});
