import { createRoute, type OpenAPIHono } from "@hono/zod-openapi";
import { requestCredential } from "../../../../lib/auth/request-credential.ts";
import { StatusResponseSchema } from "../../../../lib/cli/cli-schemas.ts";
import { getStatus } from "../../../../lib/cli/get-status.ts";
import { cliKeyMessages } from "../../../../lib/cli/program-key-auth.ts";
import {
  okResponse,
  platformErrorResponse,
  rateLimitedResponse,
} from "../../../../lib/errors/openapi-responses.ts";
import type { AppEnv } from "../../../../lib/http/app-env.ts";
import { cliErrorPolicy } from "../../../../lib/http/cli-error-policy.ts";
import { keyRotationNotice } from "../../../../lib/http/key-rotation-notice.ts";
import { rateLimit } from "../../../../lib/http/rate-limit.ts";
import { omitRequestIdOnGet } from "../../../../lib/http/request-id.ts";
import { requireBearer } from "../../../../lib/http/require-bearer.ts";
import { rateLimits } from "../../../../lib/ratelimit/policies.ts";
import { keyRotationNoticeDocumented } from "../../key-rotation-documented.ts";

export const statusRoute = createRoute({
  ...keyRotationNoticeDocumented,
  method: "get",
  path: "/api/v1/cli/status",
  tags: ["Command line"],
  summary: "The program's integration status",
  description:
    "Bearer program API key. Which of click, lead and sale have reached the service (live, or as test " +
    "events; a test lead counts only when sent with the program key), whether the integration is verified, " +
    "and the next step. Rate limit 60 per minute per key. Its 200, 401 and 429 carry no `X-Request-ID`.",
  security: [{ bearerAuth: [] }],
  responses: {
    200: okResponse("Integration status", StatusResponseSchema),
    401: platformErrorResponse("Missing or malformed header, missing token, invalid key"),
    429: rateLimitedResponse,
    500: platformErrorResponse("Failed to get status (request_id: <id>)"),
  },
});

export function registerStatus(app: OpenAPIHono<AppEnv>): void {
  app.use(
    statusRoute.path,
    omitRequestIdOnGet([200, 401, 429]),
    cliErrorPolicy("Failed to get status"),
    rateLimit(rateLimits.cli),
    keyRotationNotice,
    requireBearer(cliKeyMessages),
  );
  app.openapi(statusRoute, async (c) => {
    const { db, clock, config } = c.get("deps");
    const credential = await requestCredential(c);
    const header = credential.header;
    const keyHash = credential.keyHash ?? "";
    const result = await getStatus(db, { header, keyHash, now: clock.now(), docsUrl: config.docsUrl });
    if (result.outcome === "refused") throw result.error;
    c.set("authenticatedKeyHash", keyHash);
    c.set("keyRotation", result.rotation ?? undefined);
    const { program, verified, steps, next_step } = result.status;
    return c.json(
      {
        success: true as const,
        data: {
          program,
          key_mode: result.isTestKey ? ("test" as const) : ("live" as const),
          verified,
          steps,
          next_step,
        },
      },
      200,
    );
  });
}
