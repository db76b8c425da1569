/**
 * Writes the API's OpenAPI document (the one `/openapi.json` serves), indented, to a file, for the linter
 * (`npm run lint:openapi`) and for client generators. Builds the app in Node; no database is reached.
 */
import { mkdir, writeFile } from "node:fs/promises";
import { dirname } from "node:path";
import { generatedOpenApiDocument } from "./openapi-asset.ts";

const target = process.argv[2] ?? ".openapi/openapi.json";
await mkdir(dirname(target), { recursive: true });
await writeFile(target, `${JSON.stringify(generatedOpenApiDocument(), null, 2)}\n`);
process.stdout.write(`wrote ${target}\n`);
