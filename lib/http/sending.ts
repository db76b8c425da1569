import type { Context } from "hono";
import type { Sending } from "../db/group-committed-statement.ts";
import type { AppEnv } from "./app-env.ts";

/**
 * How a request's tracking statements go to the database: through the isolate's group commit unless
 * `GROUP_COMMIT=off`, a batch it sends kept alive by its `waitUntil`.
 */
export function sendingOf(c: Context<AppEnv>): Sending {
  return {
    groupCommit: c.get("deps").config.groupCommit,
    keepAlive: (work) => c.executionCtx.waitUntil(work),
  };
}
