import { createMiddleware } from "hono/factory";
import { newRequestId } from "../ids.ts";
import { createLogger } from "../log.ts";
import type { AppEnv } from "./app-env.ts";

const acceptableIncomingId = /^[A-Za-z0-9._:-]{8,128}$/;

/**
 * Every response carries `X-Request-ID` (except where a route opts out with `omitRequestIdOnGet`). A well-formed id sent by the caller is kept, so a brand can trace
 * one call through its own logs and ours; anything else is replaced by a fresh id.
 */
export const requestId = createMiddleware<AppEnv>(async (c, next) => {
  const incoming = c.req.header("X-Request-ID");
  const id = incoming && acceptableIncomingId.test(incoming) ? incoming : newRequestId();
  c.set("requestId", id);
  c.set("log", createLogger({ request_id: id }));
  c.header("X-Request-ID", id);
  await next();
  if (c.get("requestIdHeaderOmittedOn")?.includes(c.res.status)) c.res.headers.delete("X-Request-ID");
  else c.res.headers.set("X-Request-ID", id);
});

/**
 * The spec's one exception: `GET /api/v1/cli/status` answers its 200, 401 and 429 without `X-Request-ID`
 * (its 500 keeps it). A route names the statuses its GET (and HEAD, which Hono routes to the GET handler)
 * answers without the header; another method on the same path, which the route's middleware still sees and
 * may answer 401 or 404, keeps it: the exception names only the GET.
 */
export function omitRequestIdOnGet(statuses: readonly number[]) {
  return createMiddleware<AppEnv>(async (c, next) => {
    if (c.req.method === "GET" || c.req.method === "HEAD") c.set("requestIdHeaderOmittedOn", statuses);
    await next();
  });
}
