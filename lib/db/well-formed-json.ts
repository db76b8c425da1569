/**
 * JSON for a `jsonb` parameter. A lone UTF-16 surrogate (a string cut inside an emoji, say) is written by
 * `JSON.stringify` as an escape that `jsonb` refuses, failing the whole statement; sent as a text parameter
 * of its own it was stored as U+FFFD, the replacement character. Strings here keep that.
 */
export function wellFormedJson(value: unknown): string {
  return JSON.stringify(value, (_key, item: unknown) => (typeof item === "string" ? wellFormed(item) : item));
}

export function wellFormed(value: string): string {
  return value.replace(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g, "\uFFFD");
}
