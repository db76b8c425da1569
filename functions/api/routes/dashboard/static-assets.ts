import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../../../lib/http/app-env.ts";

/**
 * The dashboard's script and styles are Workers static assets (`npm run build:dashboard` writes them to
 * dashboard/public, wrangler.console.toml `[assets]`), not part of the worker's code. Deployed, a request for
 * an existing file is answered before the worker runs, with the headers of dashboard/public/_headers (a
 * year's caching: the names carry the content's hash). Any other name under the path reaches the worker,
 * which asks the assets binding (the tests' requests reach the worker first, so they are served this way too)
 * and answers the usual 404 for a name that is not there.
 */
export function registerDashboardStaticAssets(app: OpenAPIHono<AppEnv>): void {
  app.get("/dashboard/assets/:file", async (c) => {
    const assets = c.env.ASSETS;
    if (!assets) return c.notFound();
    const answer = await assets.fetch(c.req.raw);
    if (answer.status !== 200) return c.notFound();
    // The binding's response has immutable headers; the app's middleware adds its own (request id).
    return new Response(answer.body, answer);
  });
}
