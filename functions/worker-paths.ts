/**
 * Which of the three HTTP workers serves a path, as route patterns: the zone routes them (README
 * "Deploying"), the local stack gives them to the workers as Miniflare routes, and the tests' entry
 * dispatches by them. Every path of neither list is the API worker's. A route is matched against the path AND
 * its query string, and a pattern without a trailing `*` matches only the bare path: hence `/tracker.js*`, so
 * `/tracker.js?v=2` still reaches the tracking worker.
 */

/** The hot path: click, lead, sale, refund, the browser tracker's visit and config, and its script. */
export const TRACKING_WORKER_PATHS = ["/api/v1/track/*", "/tracker.js*", "/tracker/*"] as const;

/**
 * What a person signs in to: the dashboard and its session-authenticated endpoints, the sign-in, the command
 * line's login and endpoints, and the API's documentation. The only worker that verifies ID tokens.
 */
export const CONSOLE_WORKER_PATHS = [
  "/api/tracking/*",
  "/api/v1/auth/*",
  "/api/v1/cli/*",
  "/cli/*",
  "/dashboard*",
  "/docs*",
  "/openapi.json*",
] as const;

export type HttpWorker = "tracking" | "console" | "api";

const matches = (patterns: readonly string[], pathAndQuery: string) =>
  patterns.some((pattern) =>
    pattern.endsWith("*") ? pathAndQuery.startsWith(pattern.slice(0, -1)) : pathAndQuery === pattern,
  );

/** The worker a request for `pathAndQuery` (`/tracker.js?v=2`) reaches, as the zone's routes match. */
export function workerForPath(pathAndQuery: string): HttpWorker {
  if (matches(TRACKING_WORKER_PATHS, pathAndQuery)) return "tracking";
  if (matches(CONSOLE_WORKER_PATHS, pathAndQuery)) return "console";
  return "api";
}
