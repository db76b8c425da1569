import { readFile } from "node:fs/promises";
import { gzipSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import { TRACKER_SOURCE, TRACKER_VERSION } from "../../functions/api/generated/tracker-bundle.ts";
import { BUNDLE_MODULE, buildTracker, bundleModuleText } from "../../tracker/build.ts";

describe("browser tracker bundle", () => {
  it("is checked in exactly as a fresh build writes it (run `npm run build:tracker`)", async () => {
    const fresh = await buildTracker();
    expect(await readFile(BUNDLE_MODULE, "utf8")).toBe(bundleModuleText(fresh));
    // The module's string is the script byte for byte (escapes of the template literal undone).
    expect(TRACKER_SOURCE).toBe(fresh.source);
    expect(TRACKER_VERSION).toBe(fresh.version);
  });

  it("stays under 3 KB gzipped", () => {
    const gzipped = gzipSync(TRACKER_SOURCE, { level: 9 }).length;
    expect(gzipped).toBeLessThan(3 * 1024);
  });

  it("is one self-contained classic script: an IIFE with no imports, exports or eval", () => {
    expect(TRACKER_SOURCE).toMatch(/^"use strict";\(\(\)=>\{[\s\S]*\}\)\(\);$/);
    expect(TRACKER_SOURCE).not.toMatch(/\bimport\s*[({"']|\bexport\s|\beval\(|new Function\(/);
    // It parses as a script.
    expect(() => new Function(TRACKER_SOURCE)).not.toThrow();
  });
});
