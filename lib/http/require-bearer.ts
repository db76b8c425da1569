import { createMiddleware } from "hono/factory";
import type { KeyMessages } from "../auth/program-key.ts";
import { requestCredential } from "../auth/request-credential.ts";
import { platformError, typedError } from "../errors/api-error.ts";
import type { AppEnv } from "./app-env.ts";

/**
 * Refuses a request whose Authorization header cannot hold a key (absent, not Bearer, empty token) before
 * its body is validated or the database is read. Whether the token matches a key is decided later, in the
 * route's one read round trip.
 */
export function requireBearer(messages: KeyMessages) {
  return createMiddleware<AppEnv>(async (c, next) => {
    const { header } = await requestCredential(c);
    if (header.kind === "token") return next();
    const message = header.kind === "empty" ? messages.empty : messages.missing;
    throw messages.envelope === "typed"
      ? typedError(401, "invalid_key", message)
      : platformError(401, message);
  });
}
