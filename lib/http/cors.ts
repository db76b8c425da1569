import { sql } from "drizzle-orm";
import { createMiddleware } from "hono/factory";
import { programs } from "../../schema/programs.ts";
import type { Database } from "../db/client.ts";
import type { AppEnv } from "./app-env.ts";
import { normalizeOrigin, originAllowed } from "./origins.ts";

const exposedHeaders = [
  "X-Request-ID",
  "X-RateLimit-Limit",
  "X-RateLimit-Remaining",
  "X-RateLimit-Reset",
  "Retry-After",
].join(", ");

/**
 * CORS for the browser routes, governed by each program's allowed origins.
 *
 * A preflight carries no body, so it cannot name the program: it is granted when some program allows the
 * origin. The actual response is granted only when the program the request resolved to allows it (the
 * handler sets `corsAllowedOrigins`); when no program was resolved (a validation error), the preflight rule
 * applies so the page can still read why it failed.
 */
export function browserCors(methods: string) {
  return createMiddleware<AppEnv>(async (c, next) => {
    const origin = c.req.header("Origin");
    if (c.req.method === "OPTIONS") {
      const headers = new Headers({ Vary: "Origin" });
      if (origin && (await allowedByAnyProgram(c.get("deps").db, origin))) {
        headers.set("Access-Control-Allow-Origin", origin);
        headers.set("Access-Control-Allow-Methods", `${methods}, OPTIONS`);
        headers.set("Access-Control-Allow-Headers", "Content-Type, Authorization, X-Request-ID");
        headers.set("Access-Control-Max-Age", "600");
      }
      return new Response(null, { status: 204, headers });
    }
    await next();
    c.res.headers.append("Vary", "Origin");
    if (!origin) return;
    const programOrigins = c.get("corsAllowedOrigins");
    const allowed = programOrigins
      ? originAllowed(origin, programOrigins)
      : await allowedByAnyProgram(c.get("deps").db, origin);
    if (allowed) {
      c.res.headers.set("Access-Control-Allow-Origin", origin);
      c.res.headers.set("Access-Control-Expose-Headers", exposedHeaders);
    }
  });
}

const cacheMs = { allowed: 60_000, refused: 10_000 };
const originCache = new Map<string, { allowed: boolean; until: number }>();

/** Per-isolate cache: a page's preflights cost a database trip once a minute at most. */
async function allowedByAnyProgram(db: Database, origin: string): Promise<boolean> {
  const normalized = normalizeOrigin(origin);
  if (!normalized) return false;
  const cached = originCache.get(normalized);
  if (cached && cached.until > Date.now()) return cached.allowed;
  const result = await db.execute<{ allowed: boolean }>(
    sql`select exists (select 1 from ${programs} where ${normalized} = any(${programs.allowedOrigins})) as allowed`,
  );
  const allowed = result.rows[0]?.allowed === true;
  if (originCache.size > 10_000) originCache.clear();
  originCache.set(normalized, { allowed, until: Date.now() + (allowed ? cacheMs.allowed : cacheMs.refused) });
  return allowed;
}
