/**
 * The paths the tracking worker serves, as route patterns: the zone routes them to it (README "Deploying"),
 * the local stack gives them to it as Miniflare routes, and the tests' entry dispatches by them. Every other
 * path is the API worker's. A route is matched against the path AND its query string, and a pattern without
 * a trailing `*` matches only the bare path: hence `/tracker.js*`, so `/tracker.js?v=2` still reaches it.
 */
export const TRACKING_WORKER_PATHS = ["/api/v1/track/*", "/tracker.js*", "/tracker/*"] as const;

/** Whether a request for `pathAndQuery` (`/tracker.js?v=2`) goes to the tracking worker, as routes match. */
export function isTrackingWorkerPath(pathAndQuery: string): boolean {
  return TRACKING_WORKER_PATHS.some((pattern) => pathAndQuery.startsWith(pattern.slice(0, -1)));
}
