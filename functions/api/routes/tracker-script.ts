import type { OpenAPIHono } from "@hono/zod-openapi";
import type { Context } from "hono";
import type { AppEnv } from "../../../lib/http/app-env.ts";
import { TRACKER_SOURCE, TRACKER_VERSION } from "../generated/tracker-bundle.ts";

export const trackerCache = {
  /** `/tracker.js`: what pages embed; a new build reaches them within five minutes. */
  latest: "public, max-age=300",
  /** `/tracker/v<version>.js`: the URL names the content, so it never changes. */
  versioned: "public, max-age=31536000, immutable",
} as const;

const versionedName = /^v([0-9a-f]{12})\.js$/;

/**
 * The browser tracker, built into the worker (`npm run build:tracker`). Public and cacheable: any page may
 * load it, also with `crossorigin` for Subresource Integrity (hence `Access-Control-Allow-Origin: *`).
 * A versioned URL of an older build redirects to the current script, so a page pinned to it keeps
 * tracking after a deploy (with an `integrity` attribute the browser then refuses it, as the page asked).
 */
export function registerTrackerScript(app: OpenAPIHono<AppEnv>): void {
  app.get("/tracker.js", (c) => serveScript(c, trackerCache.latest));
  app.get("/tracker/:file", (c) => {
    const match = versionedName.exec(c.req.param("file"));
    if (!match) return c.notFound();
    if (match[1] === TRACKER_VERSION) return serveScript(c, trackerCache.versioned);
    c.header("Cache-Control", trackerCache.latest);
    // A redirect a `crossorigin` script follows must itself allow the page's origin, or the browser blocks it.
    c.header("Access-Control-Allow-Origin", "*");
    c.header("Cross-Origin-Resource-Policy", "cross-origin");
    return c.redirect("/tracker.js", 302);
  });
}

function serveScript(c: Context<AppEnv>, cacheControl: string): Response {
  const etag = `"${TRACKER_VERSION}"`;
  const headers = {
    "Content-Type": "application/javascript; charset=utf-8",
    "Cache-Control": cacheControl,
    ETag: etag,
    "Access-Control-Allow-Origin": "*",
    "Cross-Origin-Resource-Policy": "cross-origin",
    "X-Content-Type-Options": "nosniff",
  };
  const inm = c.req.header("If-None-Match");
  if (inm?.split(",").some((tag) => tag.trim().replace(/^W\//, "") === etag)) {
    return c.body(null, 304, headers);
  }
  return c.body(TRACKER_SOURCE, 200, headers);
}
