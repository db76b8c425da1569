import type { OpenAPIHono } from "@hono/zod-openapi";
import type { Context } from "hono";
import type { TrackingCalls } from "../../../../lib/cli/test-events/tracking-calls.ts";
import type { AppEnv } from "../../../../lib/http/app-env.ts";
import { clientIp } from "../../../../lib/http/client-ip.ts";

/**
 * The dashboard verifier's test events go through the worker's own tracking routes, in-process, as the
 * command line's do: the same validation, attribution, test flags and verification counting a brand's
 * backend meets, with the run's verification key and the signed-in caller's IP. No cookie is passed on.
 */
export function inProcessTracking(
  app: OpenAPIHono<AppEnv>,
  c: Context<AppEnv>,
): (authorization: string) => TrackingCalls {
  return (authorization) => ({
    async post(path, body) {
      const response = await app.request(
        path,
        {
          method: "POST",
          headers: {
            "Content-Type": "application/json",
            Authorization: authorization,
            "CF-Connecting-IP": clientIp(c),
            "X-Request-ID": c.get("requestId"),
          },
          body: JSON.stringify(body),
        },
        c.env,
        c.executionCtx,
      );
      const text = await response.text();
      return { status: response.status, body: text ? (JSON.parse(text) as Record<string, unknown>) : {} };
    },
  });
}
