/** Longer JSON texts are cut: a refusal names the value, it does not copy a 70 KB body back. */
const MAX_QUOTED_JSON = 100;

/**
 * A caller's value as a refusal message quotes it (`Invalid event_type: <value>`), for any value a JSON body
 * can hold. A string is quoted as it is (the spec's messages show it bare); anything else as its JSON text.
 * Not `String(value)`: a parsed object whose own `toString` or `valueOf` is not a function (`{"toString":
 * true}`) makes it throw a TypeError, which turned a 400 into a 500, and a list `["click"]` would read as
 * `click`. Never throws: what JSON cannot write (a cycle, a bigint inside) is named by its kind.
 */
export function echoedValue(value: unknown): string {
  if (typeof value === "string") return value;
  if (typeof value !== "object" || value === null) return String(value);
  let text: string;
  try {
    text = JSON.stringify(value);
  } catch {
    return "[object]";
  }
  return text.length > MAX_QUOTED_JSON ? `${text.slice(0, MAX_QUOTED_JSON)}…` : text;
}
