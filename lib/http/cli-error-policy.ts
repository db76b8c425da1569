import { createMiddleware } from "hono/factory";
import type { ErrorPolicy } from "../errors/envelopes.ts";
import type { AppEnv } from "./app-env.ts";

export function cliFailurePolicy(failureMessage: string, requestId: string): ErrorPolicy {
  return {
    failureMessage: `${failureMessage} (request_id: ${requestId})`,
    stableCodes: false,
    failureDetails: { request_id: requestId },
  };
}

/**
 * Command-line routes: a 500 repeats the request id at the end of `error.message` and in
 * `error.details.request_id` (spec section 7), so a person can quote it from the terminal.
 */
export function cliErrorPolicy(failureMessage: string) {
  return createMiddleware<AppEnv>(async (c, next) => {
    c.set("errorPolicy", cliFailurePolicy(failureMessage, c.get("requestId")));
    await next();
  });
}
