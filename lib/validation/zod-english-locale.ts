/**
 * Stands in for zod's locale index (`zod/v4/locales/index.js`) in the deployed workers (the `alias` in every
 * wrangler config). zod re-exports every one of its ~50 locales as `z.locales`, about 300 KB minified, and
 * the namespace keeps them all in the bundle; the service only uses English, which zod installs by default
 * from its own `en.js` (not through this index), so every validation message stays exactly as it is.
 */
export { default as en } from "zod/v4/locales/en.js";
