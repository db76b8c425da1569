import { bodyRefusal } from "../errors/api-error.ts";
import { hasLoneSurrogate } from "../text/lone-surrogates.ts";
import { MAX_NESTING_DEPTH, nestedDeeperThan } from "./nesting-depth.ts";

/**
 * Postgres refuses a NUL character in `text` and in `jsonb` (strings and keys alike) with an error, which
 * would turn a caller's bad input into a 500. A lone UTF-16 surrogate is not Unicode text either: `jsonb`
 * refuses its escape, and as `text` it would be stored as U+FFFD, so two different keys would name one
 * customer; it is refused too (RFC 7493, I-JSON, forbids it in the JSON of an interface). Identifiers (ids,
 * keys, codes) are matched exactly against stored rows, so any C0 control character or DEL in one is a
 * caller's mistake too; free text (URLs, referrers, reasons, metadata) may carry tabs or newlines and refuses
 * only NUL and lone surrogates.
 */
const identifierFields = new Set([
  "transaction_id",
  "customer_key",
  "click_id",
  "refund_id",
  "product_id",
  "subscription_id",
  "provider_payment_id",
  "currency",
]);

// biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is the point.
const controlCharacter = /[\u0000-\u001f\u007f]/;

export function hasControlCharacter(value: string): boolean {
  return controlCharacter.test(value);
}

export function hasNul(value: string): boolean {
  return value.includes("\u0000");
}

/**
 * The message for the first value of a parsed body (in field order) the database could not store, or
 * `null`. Paths read like the body: `line_items[0].name`; a NUL in an object key names the object.
 */
export function unstorableTextIssue(body: unknown): string | null {
  if (!body || typeof body !== "object" || Array.isArray(body)) return null;
  for (const [field, value] of Object.entries(body)) {
    // First: the walks below recurse, and would overflow the stack on a body nested thousands deep.
    if (nestedDeeperThan(value, MAX_NESTING_DEPTH)) {
      return `${field} must not be nested more than ${MAX_NESTING_DEPTH} levels deep`;
    }
    if (identifierFields.has(field) && typeof value === "string" && hasControlCharacter(value)) {
      return `${field} must not contain control characters`;
    }
    const nulAt = nulPathIn(value, field);
    if (nulAt !== null) return `${nulAt} must not contain NUL characters`;
    const surrogateAt = loneSurrogatePathIn(value, field);
    if (surrogateAt !== null) return `${surrogateAt} must not contain unpaired surrogates`;
  }
  return null;
}

/** Throws the 400 of `unstorableTextIssue`, for routes that validate their body themselves. */
export function assertStorableText(body: unknown): void {
  const issue = unstorableTextIssue(body);
  if (issue) throw bodyRefusal(issue);
}

/** The path (from `path`) of the first string or object key holding a NUL, or `null`. */
export function nulPathIn(value: unknown, path: string): string | null {
  return pathOfFirstText(value, path, hasNul);
}

/** The path (from `path`) of the first string or object key holding a lone surrogate, or `null`. */
function loneSurrogatePathIn(value: unknown, path: string): string | null {
  return pathOfFirstText(value, path, hasLoneSurrogate);
}

/** The path of the first string or object key `matches` holds for (a key names its object), or `null`. */
function pathOfFirstText(value: unknown, path: string, matches: (text: string) => boolean): string | null {
  if (typeof value === "string") return matches(value) ? path : null;
  if (Array.isArray(value)) {
    for (const [index, item] of value.entries()) {
      const found = pathOfFirstText(item, `${path}[${index}]`, matches);
      if (found !== null) return found;
    }
    return null;
  }
  if (value && typeof value === "object") {
    for (const [key, item] of Object.entries(value)) {
      if (matches(key)) return path;
      const found = pathOfFirstText(item, `${path}.${key}`, matches);
      if (found !== null) return found;
    }
  }
  return null;
}
