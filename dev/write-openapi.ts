/**
 * Writes the API's OpenAPI document (the one `/openapi.json` serves) to a file, for the linter
 * (`npm run lint:openapi`) and for client generators. Builds the app in Node; no database is reached.
 */
import { mkdir, writeFile } from "node:fs/promises";
import { dirname } from "node:path";
import { createApp } from "../functions/api/app.ts";

const target = process.argv[2] ?? ".openapi/openapi.json";
// The dependencies middleware parses the env on every request; the document needs no real database.
const response = await createApp().request(
  "/openapi.json",
  {},
  { DATABASE_URL: "postgres://docs@localhost/docs" },
);
if (response.status !== 200) throw new Error(`/openapi.json answered ${response.status}`);
await mkdir(dirname(target), { recursive: true });
await writeFile(target, `${JSON.stringify(await response.json(), null, 2)}\n`);
process.stdout.write(`wrote ${target}\n`);
