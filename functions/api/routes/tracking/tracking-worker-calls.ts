import type { Context } from "hono";
import type { TrackingCalls } from "../../../../lib/cli/test-events/tracking-calls.ts";
import type { AppEnv } from "../../../../lib/http/app-env.ts";
import { clientIp } from "../../../../lib/http/client-ip.ts";

/**
 * The command line's and the dashboard verifier's test events go through the tracking worker's own routes
 * (its service binding `TRACKING`), as a brand's backend calls them: the same validation, attribution, test
 * flags and verification counting, with the run's key and the signed-in caller's IP. No cookie is passed
 * on. A binding's call never leaves the machine, so this costs no network round trip.
 */
export function trackingWorkerCalls(c: Context<AppEnv>): (authorization: string) => TrackingCalls {
  const tracking = c.env.TRACKING;
  if (!tracking) throw new Error("The TRACKING service binding is missing: test events cannot be sent");
  return (authorization) => ({
    async post(path, body) {
      const response = await tracking.fetch(
        new Request(new URL(path, c.req.url), {
          method: "POST",
          headers: {
            "Content-Type": "application/json",
            Authorization: authorization,
            "CF-Connecting-IP": clientIp(c),
            "X-Request-ID": c.get("requestId"),
          },
          body: JSON.stringify(body),
        }),
      );
      const text = await response.text();
      return { status: response.status, body: text ? (JSON.parse(text) as Record<string, unknown>) : {} };
    },
  });
}
