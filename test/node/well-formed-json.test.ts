/**
 * `wellFormedJson` (`lib/db/well-formed-json.ts`) answers what the replacer alone answers, for any value: the
 * fast path (plain `JSON.stringify` when no surrogate escape is in its output) must never keep a lone surrogate
 * or change anything else.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { wellFormed, wellFormedJson } from "../../lib/db/well-formed-json.ts";

/** The definition: every string of the value, at any depth, with its lone surrogates replaced. */
const replacerOnly = (value: unknown) =>
  JSON.stringify(value, (_key, item: unknown) => (typeof item === "string" ? wellFormed(item) : item));

/** Strings of any UTF-16 code units, lone surrogates and texts that spell an escape among them. */
const awkwardString = fc.oneof(
  fc.string({ unit: "binary" }),
  fc.string({ unit: "grapheme" }),
  fc.constantFrom("\ud800", "a\udc00", "\ud83d\ude00", "\\ud800", "\\\ud800", "\\u00e9", "\udbff\udfff"),
);

describe("wellFormedJson", () => {
  it("equals the replacer's JSON for any value, and its JSON parses back with no lone surrogate", () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.array(awkwardString), (value, strings) => {
        const input = { value, strings, nested: [{ s: strings[0] ?? null }] };
        const json = wellFormedJson(input);
        expect(json).toBe(replacerOnly(input));
        // Parsed back, it holds no lone surrogate: replacing them changes nothing.
        expect(replacerOnly(JSON.parse(json))).toBe(json);
      }),
      { numRuns: 2_000 },
    );
  });

  it("keeps paired surrogates and a text that only spells an escape", () => {
    expect(wellFormedJson(["\ud83d\ude00", "\\ud800", "x\ud800"])).toBe('["😀","\\\\ud800","x\uFFFD"]');
    expect(wellFormedJson(undefined)).toBeUndefined();
  });
});
