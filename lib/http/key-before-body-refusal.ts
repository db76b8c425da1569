import { createMiddleware } from "hono/factory";
import { HTTPException } from "hono/http-exception";
import {
  type ApiKeyRecord,
  checkApiKey,
  type KeyMessages,
  keyRefusalError,
  readApiKeyRecord,
} from "../auth/program-key.ts";
import { requestCredential } from "../auth/request-credential.ts";
import { BodyRefusal } from "../errors/api-error.ts";
import { handleError } from "../errors/on-error.ts";
import { errorFields } from "../log.ts";
import type { AppEnv } from "./app-env.ts";

/**
 * Spec sections 5 and 7: a missing, malformed, unknown or retired key answers 401 ("every request with that
 * key", for a retired one). The sale, the server-mode lead and the command line's test event check the key in
 * their one read round trip, after the body is validated, so that a refused body makes no read of theirs. When
 * the body is refused before that read (its schema, malformed JSON, a media type, text Postgres cannot store,
 * the test event's type), this checks the key alone and, if the key does not authenticate, answers its 401
 * instead of the body's 400: a client with a bad key learns that first, whatever its body. One round trip, on
 * that error path only. A key that authenticates leaves the 400 as it was, with the key's rotation notice when
 * it is marked for rotation (as every answer to such a key). Should that read fail, the 400 stands: a request
 * the body already decided does not become a retryable 500.
 *
 * Registered after the rate limiter, the key's rotation notice and the request id, which decorate whatever
 * answer comes back from here; before the route's body validation.
 */
export function keyBeforeBodyRefusal(messages: KeyMessages) {
  return createMiddleware<AppEnv>(async (c, next) => {
    await next();
    if (!isBodyRefusal(c.error)) return;
    const { header, keyHash } = await requestCredential(c);
    // No Authorization header, or an empty Bearer: the lead's browser mode (the sale refused it earlier).
    if (header.kind === "absent" || header.kind === "empty") return;
    const { db, clock, config } = c.get("deps");
    let record: ApiKeyRecord | null = null;
    if (header.kind === "token" && keyHash) {
      try {
        record = await readApiKeyRecord(db, keyHash);
      } catch (error) {
        c.get("log").warn(
          "key check after a refused body failed; the body's answer stands",
          errorFields(error),
        );
        return;
      }
    }
    const check = checkApiKey(header, record, clock.now());
    if (check.ok) {
      if (keyHash) c.set("authenticatedKeyHash", keyHash);
      c.set("keyRotation", check.rotation ?? undefined);
      return;
    }
    c.res = handleError(keyRefusalError(check.refusal, messages, config.docsUrl), c);
  });
}

/**
 * A refusal of the body raised before the route's handler ran: ours (`BodyRefusal`), or Hono's for malformed
 * JSON (400) and a media type that is not JSON (415, answered as 400). Not a body over the size limit: its 413
 * stays, before any database trip.
 */
export function isBodyRefusal(error: unknown): boolean {
  return (
    error instanceof BodyRefusal ||
    (error instanceof HTTPException && (error.status === 400 || error.status === 415))
  );
}
