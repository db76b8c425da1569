import { readFile } from "node:fs/promises";
import { PGlite } from "@electric-sql/pglite";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { clickDimensions, urlHost, urlOrigin } from "../../lib/analytics/click-dimensions.ts";

/**
 * The worker derives a click's analytics dimensions (`lib/analytics/click-dimensions.ts`) where the database
 * did, as generated columns, until migration 0042. The values must not change: each URL here, written and
 * generated, gets the same dimensions from the worker's code as from the database's `analytics_url_*`
 * functions (0010, 0025) on embedded PGlite.
 */

let db: PGlite;

beforeAll(async () => {
  db = new PGlite();
  for (const file of ["0010_analytics_readiness.sql", "0025_analytics_url_functions_plpgsql.sql"]) {
    const statements = (await readFile(`migrations/${file}`, "utf8")).split("--> statement-breakpoint");
    for (const statement of statements) {
      if (/^\s*(--[^\n]*\n\s*)*CREATE OR REPLACE FUNCTION/.test(statement)) await db.exec(statement);
    }
  }
}, 60_000);
afterAll(() => db?.close());

/**
 * The database's dimensions. Each is read wrapped in `<` and `>`: PGlite's client drops a byte order mark
 * that starts a text value when it reads the result, which the value itself keeps.
 */
async function databaseDimensions(affiliateUrl: string, referrer: string | null) {
  const { rows } = await db.query<Record<string, string | null>>(
    `select '<' || analytics_url_host($2) || '>' as "referrerDomain",
            '<' || analytics_url_param($1, 'utm_source') || '>' as "utmSource",
            '<' || analytics_url_param($1, 'utm_medium') || '>' as "utmMedium",
            '<' || analytics_url_param($1, 'utm_campaign') || '>' as "utmCampaign",
            '<' || analytics_url_page($1) || '>' as "landingPage",
            '<' || analytics_url_origin($1) || '>' as "landingOrigin"`,
    [affiliateUrl, referrer],
  );
  return Object.fromEntries(
    Object.entries(rows[0] ?? {}).map(([name, value]) => [name, value === null ? null : value.slice(1, -1)]),
  );
}

const written: [string, string | null][] = [
  ["https://shop.example/?aff=code-a", null],
  [
    "https://WWW.Shop.Example:8443/Landing/Page?utm_source=News%20Letter&utm_medium=email&utm_campaign=%E2%82%AC+off#top",
    "https://www.Google.com/search?q=x",
  ],
  ["http://user:pw@www.example.org/a?b=1", "http://a@b@c.example/"],
  ["https://x.example/?utm_source=%FF%FE&utm_medium=%zz&utm_campaign=%00", "android-app://com.google"],
  ["https://x.example/?utm_source=&utm_medium=+&utm_campaign=%20%20spaced%20%20", "not a url"],
  ["https://x.example/#?utm_source=frag", ""],
  [`https://x.example/${"p".repeat(400)}?utm_source=${"s".repeat(300)}`, `https://${"h".repeat(300)}/`],
  [`https://x.example/${"€".repeat(400)}?utm_source=${"😀".repeat(300)}`, "https://www./"],
  ["/relative/path?utm_source=rel", "https://user@/"],
  ["https://x.example?utm_source=a?utm_source=b&utm_source=c", "HTTPS://WWW.EXAMPLE.COM:80"],
  ["https://x.example/?utm_source=%C3%A9%E2%82", "1http://x.example/"],
  ["https://x.example/?utm_source=%EF%BB%BFbom&utm_medium=%ef%bb%bf", null],
];

describe("a click's analytics dimensions", () => {
  it.each(written)("%s (referrer %s): as the database derives them", async (url, referrer) => {
    expect(clickDimensions(url, referrer)).toEqual(await databaseDimensions(url, referrer));
  });

  it("lower-cases a host outside ASCII one character at a time, as PostgreSQL's lower() under C.UTF-8", () => {
    expect(urlHost("https://WWW.İSTANBUL.example/")).toBe("istanbul.example");
    expect(urlOrigin("https://ΣΟΦΊΑΣ.example")).toBe("https://σοφίασ.example");
  });

  it("a click without a referrer has no referrer domain", () => {
    expect(clickDimensions("https://x.example/?utm_source=a", null)).toMatchObject({
      referrerDomain: null,
      utmSource: "a",
    });
  });

  it("generated URLs: the same dimensions as the database's", async () => {
    const piece = (chars: string, maxLength: number) =>
      fc.string({ unit: fc.constantFrom(...chars), maxLength });
    const escapes = fc.constantFrom(
      "%20",
      "%E2%82%AC",
      "%C3%A9",
      "%FF",
      "%00",
      "%zz",
      "%",
      "%E2%82",
      "+",
      "%2B",
    );
    const value = fc
      .array(fc.oneof(piece("abcAB z_-.~é", 6), escapes), { maxLength: 5 })
      .map((parts) => parts.join(""));
    const param = fc
      .tuple(
        fc.constantFrom("utm_source", "utm_medium", "utm_campaign", "aff", "UTM_SOURCE", "xutm_source"),
        value,
      )
      .map(([name, v]) => `${name}=${v}`);
    const url = fc
      .record({
        scheme: fc.constantFrom(
          "https://",
          "http://",
          "HTTP://",
          "a+b.c-d://",
          "1http://",
          "https:/",
          "",
          "//",
        ),
        user: fc.constantFrom("", "user@", "user:pw@", "a@b@", "@"),
        www: fc.constantFrom("", "www.", "WWW.", "www"),
        host: piece("abcXYZ019.-é_:", 12),
        port: fc.constantFrom("", ":8443", ":"),
        path: piece("abcé/€.-_%", 12),
        query: fc.array(param, { maxLength: 4 }).map((ps) => (ps.length ? `?${ps.join("&")}` : "")),
        fragment: fc.constantFrom("", "#top", "#?utm_source=frag", "#a#b"),
      })
      .map((u) => `${u.scheme}${u.user}${u.www}${u.host}${u.port}${u.path}${u.query}${u.fragment}`);
    const anyUrl = fc.oneof({ arbitrary: url, weight: 4 }, fc.string({ maxLength: 40 }));
    await fc.assert(
      fc.asyncProperty(anyUrl, fc.option(anyUrl, { nil: null }), async (affiliateUrl, referrer) => {
        expect(clickDimensions(affiliateUrl, referrer)).toEqual(
          await databaseDimensions(affiliateUrl, referrer),
        );
      }),
      { numRuns: 1500 },
    );
  }, 120_000);
});
