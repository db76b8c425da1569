import type { Context } from "hono";
import { HTTPException } from "hono/http-exception";
import type { AppEnv } from "../http/app-env.ts";
import { rootLogger } from "../log.ts";
import { ApiError, platformError, typedError } from "./api-error.ts";
import { defaultErrorPolicy, renderError } from "./envelopes.ts";

/** A JSON route's body sent as another media type (`curl -d` without `-H` sends a form's): say what to send. */
const unsupportedMediaTypeMessage = "Content-Type must be application/json";

/**
 * The one place errors become responses. Deliberate `ApiError`s render as the spec says; a framework
 * `HTTPException` (malformed JSON, a body that is not JSON) becomes a 400; anything else is logged and
 * answered with the route's generic 500 message, never the internal text.
 */
export function handleError(error: unknown, c: Context<AppEnv>): Response {
  const policy = c.get("errorPolicy") ?? defaultErrorPolicy;
  let apiError: ApiError;
  if (error instanceof ApiError) {
    apiError = error;
  } else if (error instanceof HTTPException && error.status === 415) {
    apiError = platformError(400, unsupportedMediaTypeMessage);
  } else if (error instanceof HTTPException && error.status < 500) {
    apiError = platformError(400, error.message || "Invalid request");
  } else {
    (c.get("log") ?? rootLogger).error("request failed", error, { path: c.req.routePath });
    apiError = policy.typedFailure
      ? typedError(500, policy.typedFailure.code, policy.failureMessage, policy.typedFailure.fields)
      : platformError(500, policy.failureMessage, { details: policy.failureDetails ?? {} });
  }
  return c.json(renderError(apiError, policy), apiError.status);
}
