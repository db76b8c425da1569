import { describe, expect, it } from "vitest";
import { base64Url } from "../../lib/ids.ts";

/** The ids, keys, tokens and PKCE challenges are base64url: it must be RFC 4648's, without padding. */
describe("base64Url", () => {
  it.each([
    ["", ""],
    ["f", "Zg"],
    ["fo", "Zm8"],
    ["foo", "Zm9v"],
    ["foob", "Zm9vYg"],
    ["fooba", "Zm9vYmE"],
    ["foobar", "Zm9vYmFy"],
  ])("RFC 4648's test vector %j", (text, encoded) => {
    expect(base64Url(new TextEncoder().encode(text))).toBe(encoded);
  });

  it("uses - and _ where base64 has + and /", () => {
    expect(base64Url(new Uint8Array([0xfb, 0xff, 0xbf]))).toBe("-_-_");
  });

  it("agrees with Node's base64url on random bytes of every length up to 64", () => {
    for (let length = 0; length <= 64; length++) {
      for (let round = 0; round < 20; round++) {
        const bytes = crypto.getRandomValues(new Uint8Array(length));
        expect(base64Url(bytes)).toBe(Buffer.from(bytes).toString("base64url"));
      }
    }
  });
});
