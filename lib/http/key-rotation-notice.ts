import { createMiddleware } from "hono/factory";
import type { KeyRotation } from "../auth/program-key.ts";
import type { AppEnv } from "./app-env.ts";

/** `Deprecation: @<unix seconds>` (RFC 9745), `Sunset: <HTTP-date>` (RFC 8594), `Link: rel="deprecation"`. */
export function rotationHeaders(rotation: KeyRotation, docsUrl: string): Record<string, string> {
  return {
    Deprecation: `@${Math.floor(rotation.markedAt.getTime() / 1000)}`,
    Sunset: rotation.rotateBy.toUTCString(),
    Link: `<${docsUrl}>; rel="deprecation"`,
  };
}

export function rotationWarning(rotation: KeyRotation, docsUrl: string) {
  return {
    code: "api_key_rotation_required",
    message: `This API key must be rotated by ${rotation.rotateBy.toISOString()}; after that it stops working.`,
    hint: "Generate a new API key in the program settings, deploy it, then stop using this one.",
    rotate_by: rotation.rotateBy.toISOString(),
    docs_url: docsUrl,
  };
}

/**
 * On key-authenticated routes: when the handler authenticated with a key marked for rotation
 * (`keyRotation` set), the response gains the deprecation headers and a top-level `warnings` array, on
 * success and error bodies alike. No existing field is removed or renamed.
 */
export const keyRotationNotice = createMiddleware<AppEnv>(async (c, next) => {
  await next();
  const rotation = c.get("keyRotation");
  if (!rotation) return;
  const docsUrl = c.get("deps").config.docsUrl;
  const headers = new Headers(c.res.headers);
  headers.delete("Content-Length");
  for (const [name, value] of Object.entries(rotationHeaders(rotation, docsUrl))) headers.set(name, value);
  let body: string | null = await c.res.text();
  try {
    const parsed = JSON.parse(body) as unknown;
    if (parsed && typeof parsed === "object" && !Array.isArray(parsed)) {
      const existing = (parsed as { warnings?: unknown }).warnings;
      const warnings = [...(Array.isArray(existing) ? existing : []), rotationWarning(rotation, docsUrl)];
      body = JSON.stringify({ ...parsed, warnings });
    }
  } catch {
    // Not JSON: headers only.
  }
  c.res = new Response(body, { status: c.res.status, headers });
});
