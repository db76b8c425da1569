import { SELF } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { createBaseApp } from "../../functions/api/base-app.ts";
import { consoleRoutes } from "../../functions/api/console-routes.ts";
import apiWorker from "../../functions/api/index.ts";
import { managementRoutes } from "../../functions/api/management-routes.ts";
import { trackingRoutes } from "../../functions/api/tracking-routes.ts";
import consoleWorker from "../../functions/console/index.ts";
import trackingWorker from "../../functions/tracking/index.ts";
import { type HttpWorker, workerForPath } from "../../functions/worker-paths.ts";
import { clicksOfProgram, createProgram, fetchWorker } from "./harness.ts";

/** The paths an app serves, `:param` segments filled in, without the shared `/healthz` and middleware. */
function servedPaths(registrations: Parameters<typeof createBaseApp>[0]): string[] {
  return createBaseApp(registrations)
    .routes.filter((route) => route.method !== "ALL" && route.path !== "/healthz")
    .map((route) => route.path.replace(/:\w+/g, "x"));
}

describe("three HTTP workers on one host, split by path", () => {
  it.each<[string, HttpWorker]>([
    ["/api/v1/track/click", "tracking"],
    ["/api/v1/track/sale", "tracking"],
    ["/tracker.js", "tracking"],
    // A route is matched with the query string: a cache-buster must not send the script elsewhere.
    ["/tracker.js?v=2", "tracking"],
    ["/tracker/1.2.3.js", "tracking"],
    ["/api/v1/track/config?program_id=1", "tracking"],
    ["/api/tracking/status/1", "console"],
    ["/api/tracking/test", "console"],
    ["/api/v1/auth/sign-in", "console"],
    ["/api/v1/cli/auth/start", "console"],
    ["/cli/login?state=x", "console"],
    ["/dashboard", "console"],
    ["/dashboard/assets/app.js", "console"],
    ["/docs", "console"],
    ["/openapi.json", "console"],
    ["/api/v1/track", "api"],
    ["/api/v1/tracking/status", "api"],
    ["/api/v1/programs/me/readiness", "api"],
    ["/api/v1/programs/x/settings", "api"],
    ["/api/v1/authx", "api"],
    ["/healthz", "api"],
    ["/", "api"],
  ])("%s goes to the %s worker", (path, worker) => {
    expect(workerForPath(path)).toBe(worker);
  });

  it.each<[HttpWorker, Parameters<typeof createBaseApp>[0], string]>([
    ["tracking", trackingRoutes, "/api/v1/track/click"],
    ["console", consoleRoutes, "/api/v1/cli/status"],
    ["api", managementRoutes, "/api/v1/programs/me/readiness"],
  ])("every route of the %s worker is routed to it", (worker, routes, example) => {
    const paths = servedPaths(routes);
    expect(paths).toContain(example);
    expect(paths.filter((path) => workerForPath(path) !== worker)).toEqual([]);
  });

  it("each worker serves only its own routes, and answers the others' 404", async () => {
    const p = await createProgram();
    const auth = { Authorization: `Bearer ${p.apiKey}` };
    const clickBody = JSON.stringify({ affiliate_url: `https://shop.example/?aff=${p.links[0]}` });
    const calls = [
      { path: "/api/v1/track/click", init: { method: "POST", body: clickBody }, owner: trackingWorker },
      { path: "/api/v1/programs/me/readiness", init: { headers: auth }, owner: apiWorker },
      { path: "/api/v1/cli/status", init: { headers: auth }, owner: consoleWorker },
    ];
    for (const { path, init, owner } of calls) {
      for (const worker of [trackingWorker, apiWorker, consoleWorker]) {
        const response = await fetchWorker(worker, path, init);
        if (worker === owner) {
          expect(response.status, path).toBe(200);
          continue;
        }
        expect(response.status, path).toBe(404);
        expect(await response.json()).toMatchObject({ error: { status: 404, message: "Not found" } });
      }
    }
  });

  it("without its TRACKING binding the console worker sends no test event: 500, nothing recorded", async () => {
    const p = await createProgram();
    const clicksBefore = (await clicksOfProgram(p.programId)).length;
    const response = await fetchWorker(
      consoleWorker,
      "/api/v1/cli/test-event",
      {
        method: "POST",
        headers: { Authorization: `Bearer ${p.apiKey}` },
        body: JSON.stringify({ event_type: "click" }),
      },
      { ...env, TRACKING: undefined },
    );
    expect(response.status).toBe(500);
    expect(await response.json()).toMatchObject({ error: { status: 500 } });
    expect(await clicksOfProgram(p.programId)).toHaveLength(clicksBefore);
  });

  it("through the routed entry: the script with a cache-buster, the docs and the document", async () => {
    const script = await SELF.fetch("https://api.test/tracker.js?v=2");
    expect(script.status).toBe(200);
    expect(script.headers.get("Content-Type")).toContain("javascript");
    const docs = await SELF.fetch("https://api.test/docs");
    expect(docs.status).toBe(200);
    const document = await SELF.fetch("https://api.test/openapi.json");
    expect(document.status).toBe(200);
    expect(await document.json()).toMatchObject({ openapi: expect.any(String) });
  });
});
