/**
 * Stands in for zod's JSON Schema importer (`zod/v4/classic/from-json-schema.js`) in the deployed workers
 * (the `alias` in every wrangler config). zod's namespace keeps the importer (about 12 KB minified) in every
 * bundle, but the service never turns a JSON Schema into a zod schema (`z.fromJSONSchema`): its schemas are
 * written in zod. Should anything call it, it fails loudly rather than answer a schema that accepts anything.
 */
export function fromJSONSchema(): never {
  throw new Error(
    "z.fromJSONSchema is not part of this build (lib/validation/zod-without-from-json-schema.ts)",
  );
}
