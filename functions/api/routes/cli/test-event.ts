import { createRoute, type OpenAPIHono } from "@hono/zod-openapi";
import { requestCredential } from "../../../../lib/auth/request-credential.ts";
import { TestEventRequestSchema, TestEventResponseSchema } from "../../../../lib/cli/cli-schemas.ts";
import { cliKeyMessages } from "../../../../lib/cli/program-key-auth.ts";
import {
  runTestEvent,
  type TestEventRequest,
  type TestEventType,
  testEventTypes,
} from "../../../../lib/cli/test-events/run-test-event.ts";
import { bodyRefusal, typedError } from "../../../../lib/errors/api-error.ts";
import { echoedValue } from "../../../../lib/errors/echoed-value.ts";
import {
  okResponse,
  payloadTooLargeResponse,
  platformErrorResponse,
  rateLimitedResponse,
} from "../../../../lib/errors/openapi-responses.ts";
import type { AppEnv } from "../../../../lib/http/app-env.ts";
import { limitBody } from "../../../../lib/http/body-limit.ts";
import { cliErrorPolicy, cliFailurePolicy } from "../../../../lib/http/cli-error-policy.ts";
import { keyBeforeBodyRefusal } from "../../../../lib/http/key-before-body-refusal.ts";
import { keyRotationNotice } from "../../../../lib/http/key-rotation-notice.ts";
import { rateLimit } from "../../../../lib/http/rate-limit.ts";
import { requireBearer } from "../../../../lib/http/require-bearer.ts";
import { rateLimits } from "../../../../lib/ratelimit/policies.ts";
import { keyRotationNoticeDocumented } from "../../key-rotation-documented.ts";
import { trackingWorkerCalls } from "../tracking/tracking-worker-calls.ts";

export const testEventRoute = createRoute({
  ...keyRotationNoticeDocumented,
  method: "post",
  path: "/api/v1/cli/test-event",
  tags: ["Command line"],
  summary: "Record a test click, lead or sale, or run the synthetic click -> lead -> sale chain",
  description:
    "Bearer program API key. `event_type` (`click`, `lead`, `sale`) records one test event through the " +
    "tracking endpoint with the key (it counts toward integration verification); `type: chain` runs the " +
    "three in order on the program's verification fixtures and reports each step. At most 10 chains per " +
    "program per hour (429 `rate_limited`, checked after the fixtures were refreshed). Rate limit 60 per " +
    "minute per key.",
  security: [{ bearerAuth: [] }],
  request: { body: { required: true, content: { "application/json": { schema: TestEventRequestSchema } } } },
  responses: {
    200: okResponse("The test event's step, or every step of the chain", TestEventResponseSchema),
    400: platformErrorResponse("Invalid event_type: <value>. Valid: click, lead, sale"),
    401: platformErrorResponse("Missing or malformed header, missing token, invalid key"),
    413: payloadTooLargeResponse,
    429: rateLimitedResponse,
    500: platformErrorResponse(
      "Failed to run synthetic chain (request_id: <id>); Failed to process test event (request_id: <id>)",
    ),
  },
});

function requested(body: { event_type?: unknown; type?: unknown }): TestEventRequest {
  if (body.type === "chain") return { kind: "chain" };
  const type = body.event_type;
  if (typeof type === "string" && (testEventTypes as readonly string[]).includes(type)) {
    return { kind: "event", eventType: type as TestEventType };
  }
  // Refused before the key is read: a key that does not authenticate answers its 401 instead.
  throw bodyRefusal(`Invalid event_type: ${echoedValue(type)}. Valid: click, lead, sale`);
}

export function registerTestEvent(app: OpenAPIHono<AppEnv>): void {
  app.use(
    testEventRoute.path,
    cliErrorPolicy("Failed to process test event"),
    // The limiter first, so a 413 carries the X-RateLimit-* headers like every answer of the route.
    rateLimit(rateLimits.cli),
    limitBody(),
    keyRotationNotice,
    requireBearer(cliKeyMessages),
    keyBeforeBodyRefusal(cliKeyMessages),
  );
  app.openapi(testEventRoute, async (c) => {
    const request = requested(c.req.valid("json"));
    const { db, clock, config } = c.get("deps");
    // A chain's 500 has its own message (spec section 7).
    if (request.kind === "chain")
      c.set("errorPolicy", cliFailurePolicy("Failed to run synthetic chain", c.get("requestId")));
    const credential = await requestCredential(c);
    const header = credential.header;
    const keyHash = credential.keyHash ?? "";
    const result = await runTestEvent(db, trackingWorkerCalls(c)(c.req.header("Authorization") ?? ""), {
      header,
      keyHash,
      now: clock.now(),
      docsUrl: config.docsUrl,
      request,
    });
    if (result.outcome === "refused") throw result.error;
    c.set("authenticatedKeyHash", keyHash);
    c.set("keyRotation", result.rotation ?? undefined);
    const log = c.get("log");
    if (result.outcome === "chain_capped") {
      log.info("synthetic chain capped");
      const refused = typedError(429, "rate_limited", "Too many synthetic chains (max 10/program/hour).", {
        status: 429,
        retry_after_seconds: result.retryAfterSeconds,
      });
      c.header("Retry-After", String(result.retryAfterSeconds));
      throw refused;
    }
    if (result.outcome === "event") {
      log.info("cli test event", {
        step: result.report.step,
        status: result.report.status,
        program_id: result.programId,
      });
      if (result.report.status >= 500) throw new Error(`test ${result.report.step} failed`);
      return c.json(
        {
          success: true as const,
          data: {
            type: "event" as const,
            program_id: result.programId,
            test_mode: true as const,
            step: result.report,
          },
        },
        200,
      );
    }
    const ok = result.steps.length === testEventTypes.length && result.steps.every((step) => step.ok);
    log.info("synthetic chain", { ok, steps: result.steps.length, program_id: result.programId });
    if (result.steps.some((step) => step.status >= 500)) throw new Error("synthetic chain step failed");
    return c.json(
      {
        success: true as const,
        data: {
          type: "chain" as const,
          program_id: result.programId,
          test_mode: true as const,
          ok,
          steps: result.steps,
        },
      },
      200,
    );
  });
}
