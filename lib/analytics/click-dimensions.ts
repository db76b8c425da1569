/**
 * A click's analytics dimensions, derived from its URLs by the worker when it records the click: the
 * referrer's domain, the landing URL's `utm_source`, `utm_medium` and `utm_campaign`, its page (host and
 * path) and its origin. The same values the database's `analytics_url_*` functions give (migrations 0010 and
 * 0025; `test/node/click-dimensions.test.ts` compares them on generated URLs), which until migration 0042
 * computed them as generated columns, ten PL/pgSQL calls in every click's insert. The functions stay, for
 * writers of click rows outside the worker (the ten-million-event generator, test fixtures).
 */
export interface ClickDimensions {
  referrerDomain: string | null;
  utmSource: string | null;
  utmMedium: string | null;
  utmCampaign: string | null;
  landingPage: string | null;
  landingOrigin: string | null;
}

export function clickDimensions(affiliateUrl: string, referrer: string | null): ClickDimensions {
  return {
    referrerDomain: referrer === null ? null : urlHost(referrer),
    utmSource: urlParam(affiliateUrl, "utm_source"),
    utmMedium: urlParam(affiliateUrl, "utm_medium"),
    utmCampaign: urlParam(affiliateUrl, "utm_campaign"),
    landingPage: urlPage(affiliateUrl),
    landingOrigin: urlOrigin(affiliateUrl),
  };
}

// The database functions' patterns, as JavaScript regular expressions.
const HOST = /^[A-Za-z][A-Za-z0-9+.-]*:\/\/(?:[^@/?#]*@)?([^/?#:]+)/;
const PATH = /^[A-Za-z][A-Za-z0-9+.-]*:\/\/[^/?#]*(\/[^?#]*)/;
const ORIGIN = /^[A-Za-z][A-Za-z0-9+.-]*:\/\/[^/?#@]+/;
const PARAMS = {
  utm_source: /[?&]utm_source=([^&]*)/,
  utm_medium: /[?&]utm_medium=([^&]*)/,
  utm_campaign: /[?&]utm_campaign=([^&]*)/,
} as const;

/** One query parameter (before any fragment), decoded, trimmed of spaces, at most 200 characters; null when absent or empty. */
export function urlParam(url: string, name: keyof typeof PARAMS): string | null {
  const match = PARAMS[name].exec(url.split("#", 1)[0] ?? "");
  if (!match) return null;
  return nullIfEmpty(leftCharacters(trimSpaces(urlDecode(match[1] ?? "")), 200));
}

/** The host of an absolute URL, lower-cased, without a leading "www."; null for anything else. */
export function urlHost(url: string): string | null {
  const host = HOST.exec(url)?.[1];
  if (host === undefined) return null;
  return nullIfEmpty(lowerCase(host).replace(/^www\./, ""));
}

/** host + path of an absolute URL (no query, no fragment), at most 300 characters. */
export function urlPage(url: string): string | null {
  const host = urlHost(url);
  if (host === null) return null;
  const path = PATH.exec(url)?.[1];
  return leftCharacters(host + (path ? path : "/"), 300);
}

/** scheme://host[:port] of an absolute URL, lower-cased: the page origin a browser would send. */
export function urlOrigin(url: string): string | null {
  const origin = ORIGIN.exec(url)?.[0];
  return origin === undefined ? null : lowerCase(origin);
}

/** Fails on what is not UTF-8; a leading byte order mark is kept, as PostgreSQL's `convert_from` keeps it. */
const strictUtf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

/**
 * Percent-decoding, `+` as a space, as `analytics_url_decode`: anything that does not decode to UTF-8 text
 * PostgreSQL can store (a NUL included) is kept as it was, never an error.
 */
export function urlDecode(value: string): string {
  if (!/[%+]/.test(value)) return value;
  const text = value.replaceAll("+", " ");
  const bytes: number[] = [];
  const encoder = new TextEncoder();
  for (const [piece] of text.matchAll(/%[0-9A-Fa-f]{2}|[^%]+|%/g)) {
    if (/^%[0-9A-Fa-f]{2}$/.test(piece)) bytes.push(Number.parseInt(piece.slice(1), 16));
    else bytes.push(...encoder.encode(piece));
  }
  if (bytes.includes(0)) return value;
  try {
    return strictUtf8.decode(new Uint8Array(bytes));
  } catch {
    return value;
  }
}

/**
 * `lower(s)` as PostgreSQL computes it under a UTF-8 locale (C.UTF-8 here and on Neon): each character on
 * its own, one for one, where JavaScript's `toLowerCase` applies context (a final sigma) and may give two
 * (`İ`). Browsers send hosts in ASCII (punycode), so this matters only for hand-written URLs.
 */
function lowerCase(value: string): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: the ASCII range, control characters included.
  if (!/[^\u0000-\u007f]/.test(value)) return value.toLowerCase();
  return Array.from(value, (character) =>
    String.fromCodePoint(character.toLowerCase().codePointAt(0) ?? 0),
  ).join("");
}

/** `btrim(s)`: spaces only. */
function trimSpaces(value: string): string {
  return value.replace(/^ +| +$/g, "");
}

/** `left(s, n)`: the first n characters (code points, not UTF-16 units). */
function leftCharacters(value: string, n: number): string {
  if (value.length <= n) return value;
  return Array.from(value).slice(0, n).join("");
}

function nullIfEmpty(value: string): string | null {
  return value === "" ? null : value;
}
