/**
 * A UTF-16 surrogate code unit without its pair (a string cut inside an emoji, say, or a JSON `\ud800`
 * escape). JSON allows one, but it is not Unicode text: the database cannot store it as it is.
 */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
const LONE_SURROGATES = new RegExp(LONE_SURROGATE.source, "g");

export function hasLoneSurrogate(value: string): boolean {
  return LONE_SURROGATE.test(value);
}

/** The text with each lone surrogate replaced by U+FFFD, the replacement character. */
export function withoutLoneSurrogates(value: string): string {
  return value.replace(LONE_SURROGATES, "\uFFFD");
}
