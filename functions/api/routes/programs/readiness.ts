import { createRoute, type OpenAPIHono } from "@hono/zod-openapi";
import type { Context } from "hono";
import { evaluateApiKey, readinessKeyMessages } from "../../../../lib/auth/program-key.ts";
import { requestCredential } from "../../../../lib/auth/request-credential.ts";
import { okResponse, rateLimitedResponse } from "../../../../lib/errors/openapi-responses.ts";
import { typedErrorResponse } from "../../../../lib/errors/openapi-typed-responses.ts";
import type { AppEnv } from "../../../../lib/http/app-env.ts";
import { errorPolicy } from "../../../../lib/http/dependencies.ts";
import { keyRotationNotice } from "../../../../lib/http/key-rotation-notice.ts";
import { rateLimit } from "../../../../lib/http/rate-limit.ts";
import { requireBearer } from "../../../../lib/http/require-bearer.ts";
import { rateLimits } from "../../../../lib/ratelimit/policies.ts";
import { readReadiness } from "../../../../lib/readiness/read-readiness.ts";
import { ReadinessResponseSchema } from "../../../../lib/readiness/readiness-response.ts";
import { keyRotationNoticeDocumented } from "../../key-rotation-documented.ts";

export const readinessRoute = createRoute({
  ...keyRotationNoticeDocumented,
  method: "get",
  path: "/api/v1/programs/me/readiness",
  tags: ["Programs"],
  summary: "Is this program's integration ready to go live?",
  description:
    "Bearer program API key; the program is the key's. Rate limit 30 per minute per key. A verdict built from " +
    "recorded events only, with one entry per check: its stage, whether it is required, pass/warn/fail, the " +
    "evidence, and how to fix it. No `success` field. Errors use the typed envelope.",
  security: [{ bearerAuth: [] }],
  responses: {
    200: okResponse("The readiness verdict", ReadinessResponseSchema),
    401: typedErrorResponse("Missing, malformed, empty or unknown key (`invalid_key`)"),
    429: rateLimitedResponse,
    500: typedErrorResponse("`internal_error` with `retry_after_seconds` 10"),
  },
});

export function registerReadiness(app: OpenAPIHono<AppEnv>): void {
  app.openAPIRegistry.registerPath(readinessRoute);
  app.use(
    readinessRoute.path,
    errorPolicy("Failed to compute readiness. Retry shortly.", false, {
      code: "internal_error",
      fields: { retry_after_seconds: 10 },
    }),
    rateLimit(rateLimits.readiness),
    keyRotationNotice,
    requireBearer(readinessKeyMessages),
  );
  app.get(readinessRoute.path, handleReadiness);
}

async function handleReadiness(c: Context<AppEnv>) {
  const { db, clock, config } = c.get("deps");
  const credential = await requestCredential(c);
  const header = credential.header;
  const keyHash = credential.keyHash ?? "";
  const { key, verdict } = await readReadiness(db, { keyHash }, clock);
  if (key) c.set("authenticatedKeyHash", keyHash);
  const keyVerdict = evaluateApiKey(header, key, clock.now(), readinessKeyMessages, config.docsUrl);
  if (!keyVerdict.ok) throw keyVerdict.error;
  c.set("keyRotation", keyVerdict.rotation ?? undefined);
  if (!verdict) throw new Error("readiness: the key's program was not found");
  return c.json(verdict, 200);
}
