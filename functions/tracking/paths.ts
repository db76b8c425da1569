/**
 * The paths the tracking worker serves, as route patterns (`*` matches any rest of the path, as in a
 * Cloudflare route): the zone routes them to it (README "Deploying"), the local stack gives them to it as
 * Miniflare routes, and the tests' entry dispatches by them. Every other path is the API worker's.
 */
export const TRACKING_WORKER_PATHS = ["/api/v1/track/*", "/tracker.js", "/tracker/*"] as const;

/** Whether a request for `pathname` goes to the tracking worker (the patterns above, matched as the edge does). */
export function isTrackingWorkerPath(pathname: string): boolean {
  return TRACKING_WORKER_PATHS.some((pattern) =>
    pattern.endsWith("*") ? pathname.startsWith(pattern.slice(0, -1)) : pathname === pattern,
  );
}
