import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import {
  buildDashboard,
  DASHBOARD_ASSETS_DIR,
  DASHBOARD_MODULE,
  dashboardAssetFiles,
  dashboardModuleText,
} from "../../dashboard/build.ts";
import {
  DASHBOARD_ASSETS_VERSION,
  DASHBOARD_SCRIPT,
  DASHBOARD_STYLE,
} from "../../functions/api/generated/dashboard-assets.ts";

describe("dashboard assets", () => {
  it("are checked in exactly as a fresh build writes them (run `npm run build:dashboard`)", async () => {
    const fresh = await buildDashboard();
    expect(await readFile(DASHBOARD_MODULE, "utf8")).toBe(dashboardModuleText(fresh));
    expect(DASHBOARD_SCRIPT).toBe(fresh.script);
    expect(DASHBOARD_STYLE).toBe(fresh.style);
    expect(DASHBOARD_ASSETS_VERSION).toBe(fresh.version);
  });

  it("are checked in as the worker's static files, this build's only (run `npm run build:dashboard`)", async () => {
    const fresh = await buildDashboard();
    const files = dashboardAssetFiles(fresh);
    expect(Object.keys(files)).toEqual([`app-${fresh.version}.js`, `app-${fresh.version}.css`]);
    expect((await readdir(DASHBOARD_ASSETS_DIR)).sort()).toEqual(Object.keys(files).sort());
    for (const [name, text] of Object.entries(files)) {
      expect(await readFile(join(DASHBOARD_ASSETS_DIR, name), "utf8"), name).toBe(text);
    }
  });

  it("stay small: script (uPlot included) under 30 KB and style under 4 KB gzipped", () => {
    expect(gzipSync(DASHBOARD_SCRIPT, { level: 9 }).length).toBeLessThan(30 * 1024);
    expect(gzipSync(DASHBOARD_STYLE, { level: 9 }).length).toBeLessThan(4 * 1024);
  });

  it("the script is one classic script loading nothing from elsewhere", () => {
    expect(DASHBOARD_SCRIPT).not.toMatch(
      /\bimport\s*[({"']|\bexport\s|\beval\(|new Function\(|https?:\/\/[a-z]/i,
    );
    expect(() => new Function(DASHBOARD_SCRIPT)).not.toThrow();
  });
});
