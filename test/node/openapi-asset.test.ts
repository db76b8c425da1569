import { readFile } from "node:fs/promises";
import { describe, expect, it } from "vitest";
import { generatedOpenApiDocument, OPENAPI_ASSET_FILE, openApiAssetText } from "../../dev/openapi-asset.ts";

describe("the OpenAPI document asset", () => {
  it("is checked in exactly as the routes generate it (run `npm run build:openapi`)", async () => {
    const checkedIn = await readFile(OPENAPI_ASSET_FILE, "utf8");
    // The structure first, for a readable difference when a route changed; then every byte.
    expect(JSON.parse(checkedIn)).toEqual(JSON.parse(JSON.stringify(generatedOpenApiDocument())));
    expect(checkedIn === openApiAssetText(), "the checked-in text is the generated one").toBe(true);
  });
});
