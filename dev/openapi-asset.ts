/**
 * Writes the API's OpenAPI document where the worker serves it from: `dashboard/public/openapi.json`, a
 * Workers static asset (wrangler.console.toml `[assets]`), so the deployed worker carries neither the
 * generator nor the document in its code. Generated in Node from every route of the three HTTP workers in one
 * app (`createApp`; no database is reached), as compact JSON: the bytes `/openapi.json` answered when the
 * worker generated it per request. Checked in (as the dashboard's assets are); a test fails when it is stale.
 *
 *   npm run build:openapi
 */
import { writeFile } from "node:fs/promises";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { createApp } from "../functions/api/app.ts";
import { OPENAPI_ASSET_PATH } from "../functions/api/openapi-asset.ts";
import { openApiDocument } from "../functions/api/openapi-document.ts";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
export const OPENAPI_ASSET_FILE = join(root, "dashboard", "public", OPENAPI_ASSET_PATH);

/** The document of the routes as they are now, generated with the real generator. */
export function generatedOpenApiDocument(): ReturnType<typeof openApiDocument> {
  return openApiDocument(createApp());
}

/** The asset's text: exactly what `c.json(document)` answered. */
export function openApiAssetText(): string {
  return JSON.stringify(generatedOpenApiDocument());
}

if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  const text = openApiAssetText();
  await writeFile(OPENAPI_ASSET_FILE, text);
  console.log(`OpenAPI document: ${text.length} bytes -> ${OPENAPI_ASSET_FILE}`);
}
