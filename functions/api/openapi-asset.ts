import type { AppEnv } from "../../lib/http/app-env.ts";

/**
 * The OpenAPI document is written at build time (`npm run build:openapi`, from the same zod schemas that
 * validate requests) to the static assets (`[assets]` of wrangler.console.toml) under this path, so the
 * worker ships neither the generator nor the document in its code. Its config runs the worker first for this
 * path: the response carries the app's headers (`X-Request-ID`), as every other route's does.
 */
export const OPENAPI_ASSET_PATH = "/openapi.json";

/** The document's text, exactly as written at build time (compact JSON). */
export async function openApiDocumentText(env: AppEnv["Bindings"], requestUrl: string): Promise<string> {
  if (!env.ASSETS) throw new Error("The ASSETS binding is missing: the OpenAPI document cannot be read");
  // A plain GET of the file: the client's method and conditional headers are the route's business, not the
  // assets'.
  const answer = await env.ASSETS.fetch(new URL(OPENAPI_ASSET_PATH, requestUrl).href);
  if (answer.status !== 200) {
    throw new Error(`The OpenAPI document asset answered ${answer.status} (run \`npm run build:openapi\`)`);
  }
  return answer.text();
}
