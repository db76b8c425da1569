import type { Context } from "hono";

/**
 * The client IP for per-IP rate limits. Cloudflare sets `CF-Connecting-IP` on every request at the edge
 * (a client cannot forge it there); the local runtime sets it too. Without it all such calls share one bucket.
 */
export function clientIp(c: Context): string {
  return c.req.header("CF-Connecting-IP")?.trim() || "unknown";
}
