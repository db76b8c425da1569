import { SELF } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { TRACKER_SOURCE, TRACKER_VERSION } from "../../functions/api/generated/tracker-bundle.ts";

const get = (path: string, headers: Record<string, string> = {}) =>
  SELF.fetch(`https://api.test${path}`, { headers, redirect: "manual" });

describe("GET /tracker.js and /tracker/v<version>.js", () => {
  it("serves the built tracker with a short cache at the unversioned path", async () => {
    const response = await get("/tracker.js");
    expect(response.status).toBe(200);
    expect(response.headers.get("Content-Type")).toBe("application/javascript; charset=utf-8");
    expect(response.headers.get("Cache-Control")).toBe("public, max-age=300");
    expect(response.headers.get("ETag")).toBe(`"${TRACKER_VERSION}"`);
    expect(response.headers.get("Access-Control-Allow-Origin")).toBe("*");
    expect(response.headers.get("X-Content-Type-Options")).toBe("nosniff");
    expect(await response.text()).toBe(TRACKER_SOURCE);
  });

  it("serves the current version immutable at its versioned path", async () => {
    expect(TRACKER_VERSION).toMatch(/^[0-9a-f]{12}$/);
    const response = await get(`/tracker/v${TRACKER_VERSION}.js`);
    expect(response.status).toBe(200);
    expect(response.headers.get("Content-Type")).toBe("application/javascript; charset=utf-8");
    expect(response.headers.get("Cache-Control")).toBe("public, max-age=31536000, immutable");
    expect(await response.text()).toBe(TRACKER_SOURCE);
  });

  it("answers 304 to a revalidation of the same build", async () => {
    const response = await get("/tracker.js", { "If-None-Match": `W/"x", "${TRACKER_VERSION}"` });
    expect(response.status).toBe(304);
    expect(await response.text()).toBe("");
    expect(response.headers.get("Cache-Control")).toBe("public, max-age=300");
    const changed = await get("/tracker.js", { "If-None-Match": '"000000000000"' });
    expect(changed.status).toBe(200);
    await changed.text();
  });

  it("redirects an older version to the current script, briefly cached", async () => {
    const current: string = TRACKER_VERSION;
    const old = current === "000000000000" ? "111111111111" : "000000000000";
    const response = await get(`/tracker/v${old}.js`);
    expect(response.status).toBe(302);
    expect(response.headers.get("Location")).toBe("/tracker.js");
    expect(response.headers.get("Cache-Control")).toBe("public, max-age=300");
    // A page loading it with `crossorigin` follows the redirect only when it allows the page's origin.
    expect(response.headers.get("Access-Control-Allow-Origin")).toBe("*");
    expect(response.headers.get("Cross-Origin-Resource-Policy")).toBe("cross-origin");
  });

  it("answers 404 for any other name", async () => {
    for (const path of ["/tracker/latest.js", "/tracker/vABC.js", `/tracker/v${TRACKER_VERSION}.css`]) {
      const response = await get(path);
      expect(response.status).toBe(404);
      expect(await response.json()).toEqual({
        data: null,
        error: { status: 404, name: "NotFoundError", message: "Not found", details: {} },
      });
    }
  });
});
