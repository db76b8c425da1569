import { SELF } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { createBaseApp } from "../../functions/api/base-app.ts";
import apiWorker from "../../functions/api/index.ts";
import { managementRoutes } from "../../functions/api/management-routes.ts";
import { trackingRoutes } from "../../functions/api/tracking-routes.ts";
import trackingWorker from "../../functions/tracking/index.ts";
import { isTrackingWorkerPath } from "../../functions/tracking/paths.ts";
import { clicksOfProgram, createProgram, fetchWorker } from "./harness.ts";

/** The paths an app serves, `:param` segments filled in, without the shared `/healthz` and middleware. */
function servedPaths(registrations: Parameters<typeof createBaseApp>[0]): string[] {
  return createBaseApp(registrations)
    .routes.filter((route) => route.method !== "ALL" && route.path !== "/healthz")
    .map((route) => route.path.replace(/:\w+/g, "x"));
}

describe("two HTTP workers on one host, split by path", () => {
  it.each([
    ["/api/v1/track/click", true],
    ["/api/v1/track/sale", true],
    ["/tracker.js", true],
    // A route is matched with the query string: a cache-buster must not send the script to the API worker.
    ["/tracker.js?v=2", true],
    ["/tracker/1.2.3.js", true],
    ["/api/v1/track/config?program_id=1", true],
    ["/api/v1/track", false],
    ["/api/v1/tracking/status", false],
    ["/api/tracking/status/1", false],
    ["/api/v1/programs/me/readiness", false],
    ["/healthz", false],
  ] as const)("%s goes to the tracking worker: %s", (path, tracking) => {
    expect(isTrackingWorkerPath(path)).toBe(tracking);
  });

  it("every tracking route is routed to the tracking worker, and no API worker route is", () => {
    const tracking = servedPaths(trackingRoutes);
    const management = servedPaths(managementRoutes);
    expect(tracking).toContain("/api/v1/track/click");
    expect(tracking.filter((path) => !isTrackingWorkerPath(path))).toEqual([]);
    expect(management).toContain("/api/v1/programs/me/readiness");
    expect(management.filter((path) => isTrackingWorkerPath(path))).toEqual([]);
  });

  it("each worker serves only its own routes, and answers the other's 404", async () => {
    const p = await createProgram();
    const clickBody = JSON.stringify({ affiliate_url: `https://shop.example/?aff=${p.links[0]}` });
    const click = await fetchWorker(trackingWorker, "/api/v1/track/click", {
      method: "POST",
      body: clickBody,
    });
    expect(click.status).toBe(200);
    const notServed = await fetchWorker(apiWorker, "/api/v1/track/click", {
      method: "POST",
      body: clickBody,
    });
    expect(notServed.status).toBe(404);
    expect(await notServed.json()).toMatchObject({ error: { status: 404, message: "Not found" } });

    const auth = { Authorization: `Bearer ${p.apiKey}` };
    const readiness = await fetchWorker(apiWorker, "/api/v1/programs/me/readiness", { headers: auth });
    expect(readiness.status).toBe(200);
    const elsewhere = await fetchWorker(trackingWorker, "/api/v1/programs/me/readiness", { headers: auth });
    expect(elsewhere.status).toBe(404);
    expect(await elsewhere.json()).toMatchObject({ error: { status: 404, message: "Not found" } });
  });

  it("without its TRACKING binding the API worker sends no test event: 500, nothing recorded", async () => {
    const p = await createProgram();
    const clicksBefore = (await clicksOfProgram(p.programId)).length;
    const response = await fetchWorker(
      apiWorker,
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

  it("the script with a cache-buster is the tracking worker's, through the routed entry", async () => {
    const script = await SELF.fetch("https://api.test/tracker.js?v=2");
    expect(script.status).toBe(200);
    expect(script.headers.get("Content-Type")).toContain("javascript");
  });
});
