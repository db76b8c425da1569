import { readFile } from "node:fs/promises";
import { PGlite } from "@electric-sql/pglite";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

/**
 * Migration 0025 rewrites the click's analytics functions (0010) in PL/pgSQL for speed. The stored columns
 * they fill must not change: this runs 0010's SQL bodies (renamed `v10_url_*`) beside 0025's on every URL
 * below, on embedded PGlite and, when DATABASE_URL is set, on PostgreSQL, and expects the same answer from
 * both, and the answer written here.
 */

const statementsOf = async (file: string) =>
  (await readFile(`migrations/${file}`, "utf8")).split("--> statement-breakpoint").map((s) => s.trim());

/** 0010's function definitions (the statements before its first ALTER TABLE). */
async function functionsOf0010(): Promise<string[]> {
  const statements = await statementsOf("0010_analytics_readiness.sql");
  return statements.filter((statement) => /^(--[^\n]*\n)*CREATE OR REPLACE FUNCTION/.test(statement));
}

interface Backend {
  query(text: string, params?: unknown[]): Promise<Record<string, unknown>[]>;
  close(): Promise<void>;
}

async function pgliteBackend(): Promise<Backend> {
  const db = new PGlite();
  return {
    query: async (text, params) => (await db.query<Record<string, unknown>>(text, params)).rows,
    close: () => db.close(),
  };
}

async function postgresBackend(url: string): Promise<Backend> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  // A schema of its own, dropped at the end: the functions resolve each other through the search path.
  const schema = `url_functions_${Math.random().toString(36).slice(2, 10)}`;
  await client.query(`create schema ${schema}`);
  await client.query(`set search_path to ${schema}`);
  return {
    query: async (text, params) => (await client.query(text, params)).rows,
    close: async () => {
      await client.query(`drop schema ${schema} cascade`);
      await client.end();
    },
  };
}

// [url, host, utm_source, page, origin]
const URLS: [string | null, string | null, string | null, string | null, string | null][] = [
  [null, null, null, null, null],
  ["https://shop.example/?aff=code-a", "shop.example", null, "shop.example/", "https://shop.example"],
  [
    "https://WWW.Shop.Example:8443/Landing/Page?utm_source=News%20Letter&aff=x#top",
    "shop.example",
    "News Letter",
    "shop.example/Landing/Page",
    "https://www.shop.example:8443",
  ],
  // The origin keeps user info before the host (0010's pattern): kept as it was.
  ["http://user:pw@www.example.org/a?b=1", "example.org", null, "example.org/a", "http://user:pw"],
  ["https://x.example/?utm_source=a+b", "x.example", "a b", "x.example/", "https://x.example"],
  ["https://x.example/?utm_source=%E2%82%AC", "x.example", "€", "x.example/", "https://x.example"],
  ["https://x.example/?utm_source=%FF%FE", "x.example", "%FF%FE", "x.example/", "https://x.example"],
  ["https://x.example/?utm_source=%zz", "x.example", "%zz", "x.example/", "https://x.example"],
  ["https://x.example/?utm_source=", "x.example", null, "x.example/", "https://x.example"],
  ["https://x.example/#?utm_source=frag", "x.example", null, "x.example/", "https://x.example"],
  [
    "https://x.example/?a=1&utm_source=%20%20spaced%20%20",
    "x.example",
    "spaced",
    "x.example/",
    "https://x.example",
  ],
  [
    `https://x.example/${"p".repeat(400)}`,
    "x.example",
    null,
    `x.example/${"p".repeat(290)}`,
    "https://x.example",
  ],
  [
    `https://x.example/?utm_source=${"s".repeat(300)}`,
    "x.example",
    "s".repeat(200),
    "x.example/",
    "https://x.example",
  ],
  ["/relative/path?utm_source=rel", null, "rel", null, null],
  ["not a url", null, null, null, null],
  ["", null, null, null, null],
  ["https://www./", null, null, null, "https://www."],
];

const backends: (() => Promise<Backend>)[] = [pgliteBackend];
const databaseUrl = process.env.DATABASE_URL;
if (databaseUrl && /^postgres(ql)?:\/\//.test(databaseUrl)) backends.push(() => postgresBackend(databaseUrl));

describe.each(backends.map((open) => ({ open, name: open === pgliteBackend ? "pglite" : "postgres" })))(
  "analytics URL functions, PL/pgSQL as SQL ($name)",
  ({ open }) => {
    let db: Backend;

    beforeAll(async () => {
      db = await open();
      const v10 = await functionsOf0010();
      expect(v10.length).toBe(5);
      // 0010's bodies under other names, then 0010 and 0025 as migrated.
      for (const statement of v10) await db.query(statement.replaceAll("analytics_url_", "v10_url_"));
      for (const statement of v10) await db.query(statement);
      for (const statement of await statementsOf("0025_analytics_url_functions_plpgsql.sql"))
        await db.query(statement);
    });
    // Unset when opening failed: that error, not a second one here, is the one to read.
    afterAll(() => db?.close());

    it("every rewritten function is PL/pgSQL, immutable, strict and parallel safe", async () => {
      const rows = await db.query(
        `select p.proname, l.lanname, p.provolatile, p.proisstrict, p.proparallel
         from pg_proc p join pg_language l on l.oid = p.prolang
         where p.proname like 'analytics_url_%' and pg_function_is_visible(p.oid) order by p.proname`,
      );
      expect(rows).toEqual(
        ["decode", "host", "origin", "page", "param"].map((name) => ({
          proname: `analytics_url_${name}`,
          lanname: "plpgsql",
          provolatile: "i",
          proisstrict: true,
          proparallel: "s",
        })),
      );
    });

    it.each(URLS)("%s", async (url, host, utmSource, page, origin) => {
      const [row] = await db.query(
        `select analytics_url_host($1) as host, v10_url_host($1) as host_v10,
                analytics_url_param($1, 'utm_source') as utm_source, v10_url_param($1, 'utm_source') as utm_source_v10,
                analytics_url_param($1, 'utm_medium') as utm_medium, v10_url_param($1, 'utm_medium') as utm_medium_v10,
                analytics_url_page($1) as page, v10_url_page($1) as page_v10,
                analytics_url_origin($1) as origin, v10_url_origin($1) as origin_v10`,
        [url],
      );
      expect(row).toEqual({
        host,
        host_v10: host,
        utm_source: utmSource,
        utm_source_v10: utmSource,
        utm_medium: null,
        utm_medium_v10: null,
        page,
        page_v10: page,
        origin,
        origin_v10: origin,
      });
    });
  },
);
