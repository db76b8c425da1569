/**
 * Stands in for drizzle's `pg-core/columns/all.js` in the deployed workers (the `alias` in every wrangler
 * config). `pgTable` imports it only for tables declared with a callback (`pgTable("t", (c) => ({...}))`),
 * which hands the callback every column builder drizzle has (PostGIS and vector columns included, about
 * 20 KB minified in every worker); our tables are declared with objects of the builders they import, so the
 * callback form never runs. Should a table ever use it, the worker fails at start-up with this message rather
 * than with a missing column type.
 */
export function getPgColumnBuilders(): never {
  throw new Error(
    "pgTable with a callback needs drizzle's column builders, left out of the worker bundles: declare the " +
      "table's columns as an object (lib/db/drizzle-without-column-builders.ts)",
  );
}
