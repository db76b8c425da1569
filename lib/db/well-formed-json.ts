import { withoutLoneSurrogates } from "../text/lone-surrogates.ts";

/**
 * JSON for a `jsonb` parameter. A lone UTF-16 surrogate (a string cut inside an emoji, say) is written by
 * `JSON.stringify` as an escape that `jsonb` refuses, failing the whole statement; sent as a text parameter
 * of its own it was stored as U+FFFD, the replacement character. Strings here keep that.
 *
 * `JSON.stringify` writes a lone surrogate as `\udXXX` (lower-case hex) and a paired one as the character
 * itself, so JSON without such an escape holds none, and is the answer as it is: the replacer, which visits
 * every value (37 µs of a sale's worker CPU in `npm run bench:profile -- sale`), runs only for JSON that might.
 */
export function wellFormedJson(value: unknown): string {
  const json = JSON.stringify(value);
  if (json === undefined || !MAYBE_LONE_SURROGATE.test(json)) return json;
  return JSON.stringify(value, (_key, item: unknown) => (typeof item === "string" ? wellFormed(item) : item));
}

/** An escape of a surrogate code unit: every lone one, and a few texts that merely spell one (`"\\ud800"`). */
const MAYBE_LONE_SURROGATE = /\\ud[89a-f]/;

/** The text as the database stores it: each lone surrogate becomes U+FFFD. */
export const wellFormed = withoutLoneSurrogates;
