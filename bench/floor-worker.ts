/**
 * The benchmark's tracking worker: the real tracking worker's routes plus two floor routes, served only by
 * `npm run bench` (never deployed: no wrangler config of the project names this file; the bench writes its
 * own). A floor route does what every tracking route must do at least, and nothing else: the same middleware
 * (request id, dependencies), the same rate limiter (the click policy, counted per IP) and one or two `select
 * 1` round trips through the same driver (`/api/bench/*`, routed here by bench/run.ts). A scenario's ratio to
 * its floor is then what our own code costs. (Readiness and analytics are the API worker's: the same
 * middleware and driver, so the same floor.)
 */
import { sql } from "drizzle-orm";
import { createBaseApp } from "../functions/api/base-app.ts";
import { trackingRoutes } from "../functions/api/tracking-routes.ts";
import type { WorkerBindings } from "../lib/http/app-env.ts";
import { rateLimit } from "../lib/http/rate-limit.ts";
import { rateLimits } from "../lib/ratelimit/policies.ts";

const app = createBaseApp(trackingRoutes);

for (const roundTrips of [1, 2]) {
  app.post(`/api/bench/floor-${roundTrips}`, rateLimit(rateLimits.click), async (c) => {
    await c.req.text();
    const db = c.get("deps").db;
    for (let i = 0; i < roundTrips; i++) await db.execute(sql`select 1`);
    return c.json({ ok: true });
  });
}

export default {
  fetch: app.fetch,
} satisfies ExportedHandler<WorkerBindings>;
