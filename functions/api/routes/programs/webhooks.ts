import { createRoute, type OpenAPIHono, z } from "@hono/zod-openapi";
import { parseProgramId, programAccessRefused } from "../../../../lib/auth/require-program-membership.ts";
import { type ApiError, platformError } from "../../../../lib/errors/api-error.ts";
import { platformErrorResponse } from "../../../../lib/errors/openapi-responses.ts";
import type { AppEnv } from "../../../../lib/http/app-env.ts";
import { limitBody } from "../../../../lib/http/body-limit.ts";
import { rootLogger } from "../../../../lib/log.ts";
import { rateLimits } from "../../../../lib/ratelimit/policies.ts";
import { webhookEventTypes } from "../../../../lib/webhooks/event-types.ts";
import {
  createEndpoint,
  createTestEvent,
  deleteEndpoint,
  listAttempts,
  listEndpoints,
  type Refusal,
  rotateEndpointSecret,
  updateEndpoint,
} from "../../../../lib/webhooks/manage-endpoints.ts";
import type { WebhookDeliveryMessage } from "../../../../lib/webhooks/message.ts";
import {
  bodyErrors,
  okResponse,
  ProgramIdParam,
  signedIn,
  signedInErrors,
  signedInSecurity,
} from "./signed-in.ts";

export const ENDPOINT_NOT_FOUND_MESSAGE = "Webhook endpoint not found";
export const NOT_MANAGER_MESSAGE = "Only a workspace owner or admin can manage webhooks";
export const SECRET_KEY_MISSING_MESSAGE =
  "Webhook secrets cannot be stored sealed: the service's WEBHOOK_SECRET_KEY is not set";

const EndpointSchema = z
  .object({
    id: z.number().int(),
    url: z.string(),
    description: z.string().nullable(),
    events: z.array(z.string().openapi({ type: "string", enum: [...webhookEventTypes] })),
    enabled: z.boolean(),
    disabled_reason: z
      .string()
      .nullable()
      .openapi({ description: "`failing` (three days of failed attempts) or `by_user`" }),
    disabled_at: z.string().nullable(),
    failing_since: z
      .string()
      .nullable()
      .openapi({ description: "First failed attempt since the last success" }),
    previous_secret_expires_at: z
      .string()
      .nullable()
      .openapi({ description: "Until then deliveries are signed with the previous secret as well" }),
    created_at: z.string(),
    updated_at: z.string(),
  })
  .openapi("WebhookEndpoint");

const secretDoc = {
  description: "`whsec_<base64>`: shown in this answer only. Verify deliveries with it (Standard Webhooks).",
};
const EndpointWithSecretSchema = z.object({
  success: z.literal(true),
  data: z.object({ endpoint: EndpointSchema, secret: z.string().openapi(secretDoc) }),
});
const EndpointResponseSchema = z.object({
  success: z.literal(true),
  data: z.object({ endpoint: EndpointSchema }),
});

const EndpointBodySchema = z
  .looseObject({
    url: z.unknown().optional().openapi({ type: "string", description: "https (http only for localhost)" }),
    events: z
      .unknown()
      .optional()
      .openapi({ type: "array", items: { type: "string", enum: [...webhookEventTypes] } }),
    enabled: z.unknown().optional().openapi({
      type: "boolean",
      description: "Turning an endpoint on again clears its failure record (a fresh three days)",
    }),
    description: z
      .unknown()
      .optional()
      .openapi({ type: ["string", "null"], description: "At most 200 characters" }),
  })
  .openapi("WebhookEndpointRequest");

const RotateBodySchema = z
  .looseObject({
    overlap_hours: z.unknown().optional().openapi({
      type: "integer",
      description: "0 to 72, default 24: how long the previous secret keeps signing as well",
    }),
  })
  .openapi("WebhookSecretRotationRequest");

const AttemptSchema = z
  .object({
    id: z.number().int(),
    delivery_id: z.number().int(),
    event_id: z.string(),
    event_type: z.string(),
    attempt: z.number().int(),
    attempted_at: z.string(),
    succeeded: z.boolean(),
    response_status: z.number().int().nullable(),
    latency_ms: z.number().int(),
    error: z.string().nullable().openapi({ description: "`HTTP <status>`, `timeout` or `network error`" }),
    delivery_status: z.enum(["pending", "succeeded", "failed", "cancelled"]),
    next_attempt_at: z.string().nullable(),
  })
  .openapi("WebhookDeliveryAttempt");

const EndpointParams = ProgramIdParam.extend({
  endpointId: z.string().openapi({ param: { name: "endpointId", in: "path" }, example: "3" }),
});

const jsonBody = <T extends z.ZodType>(schema: T) => ({
  body: { required: true, content: { "application/json": { schema } } },
});
const managerNote = `Dashboard sign-in token of a workspace owner or admin (403 \`${NOT_MANAGER_MESSAGE}\` for a member).`;
const notFound = { 404: platformErrorResponse(ENDPOINT_NOT_FOUND_MESSAGE) };
/**
 * Create and rotate write a secret: a deployed worker without its sealing key refuses to store one (a 500, as
 * the other routes that miss their configuration answer). Spread after `signedInErrors`, whose 500 it extends.
 */
const secretKeyMissing = {
  500: platformErrorResponse(
    `Internal server error; \`${SECRET_KEY_MISSING_MESSAGE}\` on a misconfigured deployment`,
  ),
};
const base = "/api/v1/programs/{id}/webhooks";
const tags = ["Webhooks"];

export const createEndpointRoute = createRoute({
  method: "post",
  path: base,
  tags,
  summary: "Register a webhook endpoint and choose its events",
  description: `${managerNote} The signing secret is in this answer only.`,
  security: signedInSecurity,
  request: { params: ProgramIdParam, ...jsonBody(EndpointBodySchema) },
  responses: {
    201: okResponse("The endpoint and its secret", EndpointWithSecretSchema),
    ...bodyErrors,
    ...signedInErrors,
    ...secretKeyMissing,
  },
});

export const listEndpointsRoute = createRoute({
  method: "get",
  path: base,
  tags,
  summary: "The program's webhook endpoints",
  description: managerNote,
  security: signedInSecurity,
  request: { params: ProgramIdParam },
  responses: {
    200: okResponse(
      "The endpoints, oldest first",
      z.object({ success: z.literal(true), data: z.object({ endpoints: z.array(EndpointSchema) }) }),
    ),
    ...signedInErrors,
  },
});

export const updateEndpointRoute = createRoute({
  method: "patch",
  path: `${base}/{endpointId}`,
  tags,
  summary: "Change an endpoint's url, events, description, or turn it off and on",
  description: managerNote,
  security: signedInSecurity,
  request: { params: EndpointParams, ...jsonBody(EndpointBodySchema) },
  responses: {
    200: okResponse("The endpoint", EndpointResponseSchema),
    ...bodyErrors,
    ...notFound,
    ...signedInErrors,
  },
});

export const deleteEndpointRoute = createRoute({
  method: "delete",
  path: `${base}/{endpointId}`,
  tags,
  summary: "Delete an endpoint (its pending deliveries and attempts with it)",
  description: managerNote,
  security: signedInSecurity,
  request: { params: EndpointParams },
  responses: {
    200: okResponse(
      "Deleted",
      z.object({ success: z.literal(true), data: z.object({ deleted: z.literal(true) }) }),
    ),
    ...notFound,
    ...signedInErrors,
  },
});

export const rotateSecretRoute = createRoute({
  method: "post",
  path: `${base}/{endpointId}/rotate-secret`,
  tags,
  summary: "Rotate the signing secret, with an overlap window",
  description:
    `${managerNote} During the overlap every delivery carries two signatures (new, then previous) in ` +
    "`webhook-signature`, so a receiver verifies with either secret while it rolls over.",
  security: signedInSecurity,
  request: { params: EndpointParams, ...jsonBody(RotateBodySchema) },
  responses: {
    200: okResponse("The endpoint and its new secret", EndpointWithSecretSchema),
    ...bodyErrors,
    ...notFound,
    ...signedInErrors,
    ...secretKeyMissing,
  },
});

export const sendTestEventRoute = createRoute({
  method: "post",
  path: `${base}/{endpointId}/test`,
  tags,
  summary: "Send a `webhook.test` event to this endpoint now",
  description: `${managerNote} Delivered through the queue like every event; its attempts are listed as usual.`,
  security: signedInSecurity,
  request: { params: EndpointParams },
  responses: {
    202: okResponse(
      "Queued",
      z.object({
        success: z.literal(true),
        data: z.object({ event_id: z.string(), delivery_id: z.number().int() }),
      }),
    ),
    ...notFound,
    ...signedInErrors,
  },
});

export const listAttemptsRoute = createRoute({
  method: "get",
  path: `${base}/{endpointId}/attempts`,
  tags,
  summary: "The endpoint's latest 100 delivery attempts (status, latency, response code)",
  description: managerNote,
  security: signedInSecurity,
  request: { params: EndpointParams },
  responses: {
    200: okResponse(
      "Newest first",
      z.object({ success: z.literal(true), data: z.object({ attempts: z.array(AttemptSchema) }) }),
    ),
    ...notFound,
    ...signedInErrors,
  },
});

function refusalError(refusal: Refusal): ApiError {
  if (refusal.reason === "invalid") return platformError(400, refusal.message);
  if (refusal.reason === "endpoint_not_found") return platformError(404, ENDPOINT_NOT_FOUND_MESSAGE);
  if (refusal.reason === "not_manager") return platformError(403, NOT_MANAGER_MESSAGE);
  if (refusal.reason === "secret_key_missing") return platformError(500, SECRET_KEY_MISSING_MESSAGE);
  return programAccessRefused();
}

export function registerWebhookEndpoints(app: OpenAPIHono<AppEnv>): void {
  const guard = signedIn({
    default: rateLimits.settingsRead,
    POST: rateLimits.settingsWrite,
    PATCH: rateLimits.settingsWrite,
    DELETE: rateLimits.settingsWrite,
  });
  for (const path of ["/api/v1/programs/:id/webhooks", "/api/v1/programs/:id/webhooks/*"]) {
    app.use(path, ...guard, limitBody()); // the limiter first: a 413 carries X-RateLimit-*
  }
  const actorOf = (c: Parameters<Parameters<typeof app.openapi>[1]>[0]) => {
    const { clock, config } = c.get("deps");
    const params = c.req.param() as { id?: string; endpointId?: string };
    return {
      userId: c.get("session")!.userId,
      programId: parseProgramId(params.id),
      endpointId: parseProgramId(params.endpointId),
      now: clock.now(),
      secretKey: config.webhookSecretKey,
      unsealedAllowed: config.webhookSecretsUnsealedAllowed,
    };
  };
  app.openapi(createEndpointRoute, async (c) => {
    const actor = actorOf(c);
    const result = await createEndpoint(c.get("deps").db, actor, c.req.valid("json"));
    if (!result.ok) throw refusalError(result);
    c.get("log").info("webhook endpoint created", {
      program_id: actor.programId,
      endpoint_id: result.endpoint.id,
    });
    return c.json(
      { success: true as const, data: { endpoint: result.endpoint, secret: result.secret } },
      201,
    );
  });
  app.openapi(listEndpointsRoute, async (c) => {
    const result = await listEndpoints(c.get("deps").db, actorOf(c));
    if (!result.ok) throw refusalError(result);
    return c.json({ success: true as const, data: { endpoints: result.endpoints } }, 200);
  });
  app.openapi(updateEndpointRoute, async (c) => {
    const actor = actorOf(c);
    const result = await updateEndpoint(c.get("deps").db, actor, c.req.valid("json"));
    if (!result.ok) throw refusalError(result);
    c.get("log").info("webhook endpoint changed", {
      program_id: actor.programId,
      endpoint_id: result.endpoint.id,
    });
    return c.json({ success: true as const, data: { endpoint: result.endpoint } }, 200);
  });
  app.openapi(deleteEndpointRoute, async (c) => {
    const actor = actorOf(c);
    const result = await deleteEndpoint(c.get("deps").db, actor);
    if (!result.ok) throw refusalError(result);
    c.get("log").info("webhook endpoint deleted", {
      program_id: actor.programId,
      endpoint_id: actor.endpointId,
    });
    return c.json({ success: true as const, data: { deleted: true as const } }, 200);
  });
  app.openapi(rotateSecretRoute, async (c) => {
    const actor = actorOf(c);
    const result = await rotateEndpointSecret(c.get("deps").db, actor, c.req.valid("json"));
    if (!result.ok) throw refusalError(result);
    c.get("log").info("webhook secret rotated", {
      program_id: actor.programId,
      endpoint_id: result.endpoint.id,
    });
    return c.json(
      { success: true as const, data: { endpoint: result.endpoint, secret: result.secret } },
      200,
    );
  });
  app.openapi(sendTestEventRoute, async (c) => {
    const result = await createTestEvent(c.get("deps").db, actorOf(c));
    if (!result.ok) throw refusalError(result);
    const message: WebhookDeliveryMessage = { kind: "webhook_delivery", delivery_id: result.deliveryId };
    // The delivery is leased and written: a failed send only waits for the lease to end and the cron.
    const queue = c.env.WEBHOOKS;
    if (queue)
      c.executionCtx.waitUntil(
        queue
          .send(message, { contentType: "json" })
          .catch((error) => rootLogger.error("test event not queued", error)),
      );
    return c.json(
      { success: true as const, data: { event_id: result.eventId, delivery_id: result.deliveryId } },
      202,
    );
  });
  app.openapi(listAttemptsRoute, async (c) => {
    const result = await listAttempts(c.get("deps").db, actorOf(c));
    if (!result.ok) throw refusalError(result);
    return c.json({ success: true as const, data: { attempts: result.attempts } }, 200);
  });
}
