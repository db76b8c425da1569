import { createMiddleware } from "hono/factory";
import { requestCredential } from "../auth/request-credential.ts";
import { evaluateLoginToken, loginTokenQuery } from "../cli/login-token-auth.ts";
import { loginTokenError, type UnauthenticatedRefusal } from "../cli/login-token-messages.ts";
import { handleError } from "../errors/on-error.ts";
import { errorFields } from "../log.ts";
import type { AppEnv } from "./app-env.ts";
import { isBodyRefusal } from "./key-before-body-refusal.ts";

/**
 * The command line's `init` with the rule the program-key routes follow (`key-before-body-refusal.ts`): a bad
 * credential is answered before a bad body. `init` checks its login token in its own read, after the body has
 * been parsed, so a body refused before that (malformed JSON, a media type that is not JSON, text Postgres
 * cannot store) would otherwise answer 400 to a caller with no token or a dead one. This checks the token
 * alone on that error path only (one round trip; none when no token was sent) and answers its 401, with the
 * instruction to log in (or the 403 of a suspended account), in place of the 400. A token that authenticates
 * leaves the 400 and is marked authenticated, so the limiter knows it for a real one; should the read fail,
 * the 400 stands.
 */
export function loginTokenBeforeBodyRefusal(messages: Record<UnauthenticatedRefusal, string>) {
  return createMiddleware<AppEnv>(async (c, next) => {
    await next();
    if (!isBodyRefusal(c.error)) return;
    const { header, keyHash } = await requestCredential(c);
    let row: Parameters<typeof evaluateLoginToken>[1];
    if (header.kind === "token" && keyHash) {
      const { db } = c.get("deps");
      try {
        [row] = await loginTokenQuery(db, keyHash);
      } catch (error) {
        c.get("log").warn(
          "login token check after a refused body failed; the body's answer stands",
          errorFields(error),
        );
        return;
      }
    }
    const verdict = evaluateLoginToken(header, row, c.get("deps").clock.now());
    if (verdict.ok && keyHash) c.set("authenticatedKeyHash", keyHash);
    else if (!verdict.ok) c.res = handleError(loginTokenError(messages, verdict.reason), c);
  });
}
