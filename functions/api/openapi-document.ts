import { type OpenAPIHono, z } from "@hono/zod-openapi";
import type { AppEnv } from "../../lib/http/app-env.ts";
import { documentInfo } from "./openapi-info.ts";
import { describeKeyRotationNotice, RetiredKeyError, RotationWarning } from "./openapi-key-rotation.ts";
import { webhooksSection } from "./openapi-webhooks.ts";

type Operation = { operationId?: string };
type PathItem = Record<string, Operation>;

/**
 * Every operation gets a stable `operationId` derived from its method and path (`POST /api/v1/track/click`
 * -> `postTrackClick`), unless its route names one, so generated clients have method names without each
 * route having to spell one out.
 */
export function operationIdOf(method: string, path: string): string {
  const words = path
    .replace(/^\/api\/(v1\/)?/, "/")
    .split(/[/{}\-_]+/)
    .filter(Boolean);
  return method.toLowerCase() + words.map((w) => w.charAt(0).toUpperCase() + w.slice(1)).join("");
}

/** The OpenAPI 3.1 document of the three HTTP workers' routes, and of the events worker's one route. */
export function openApiDocument(app: OpenAPIHono<AppEnv>): ReturnType<OpenAPIHono["getOpenAPI31Document"]> {
  // Referenced only from the key rotation notice, which is written in after generation (below).
  app.openAPIRegistry.register("RotationWarning", RotationWarning);
  app.openAPIRegistry.register("RetiredKeyError", RetiredKeyError);
  const document = app.getOpenAPI31Document(documentInfo);
  describeKeyRotationNotice(document as Parameters<typeof describeKeyRotationNotice>[0]);
  for (const [path, item] of Object.entries((document.paths ?? {}) as Record<string, PathItem>)) {
    for (const [method, operation] of Object.entries(item)) {
      operation.operationId ??= operationIdOf(method, path);
    }
  }
  return { ...document, webhooks: webhooksSection() as NonNullable<typeof document.webhooks> };
}

const EventsErrorSchema = z
  .object({ error: z.object({ code: z.string(), message: z.string() }) })
  .openapi("EventsWorkerError");

/**
 * `POST /webhooks/stripe` is served by the separate events worker on the same origin; it is described here
 * so the document covers every route a client (here, the payments provider) can call.
 */
export function describeEventsWorker(app: OpenAPIHono<AppEnv>): void {
  app.openAPIRegistry.registerPath({
    method: "post",
    path: "/webhooks/stripe",
    tags: ["Payments provider events"],
    summary: "Receive the payments provider's Connect events (served by the events worker)",
    description:
      "Checkout, invoice, refund and dispute events of connected accounts, verified with the signing secret " +
      "(`Stripe-Signature`). Body at most 256 KB. An event is recorded once however often it is delivered.",
    // Credential: the signature over the raw body, not a scheme a client sends.
    security: [],
    request: {
      headers: z.object({
        "stripe-signature": z.string().openapi({ description: "The provider's signature" }),
      }),
      body: { content: { "application/json": { schema: z.object({}).passthrough() } }, required: true },
    },
    responses: {
      200: {
        description: "Received: processed, already processed, or ignored (with the reason)",
        content: {
          "application/json": {
            schema: z
              .object({ received: z.literal(true), outcome: z.string(), reason: z.string().optional() })
              .passthrough(),
          },
        },
      },
      400: {
        description: "Signature verification failed; nothing recorded",
        content: { "application/json": { schema: EventsErrorSchema } },
      },
      409: {
        description: "The same event is being processed by another delivery; the provider retries",
        content: { "application/json": { schema: EventsErrorSchema } },
      },
      413: {
        description: "Body over 256 KB",
        content: { "application/json": { schema: EventsErrorSchema } },
      },
      500: {
        description: "Processing failed; the provider retries the delivery",
        content: { "application/json": { schema: EventsErrorSchema } },
      },
    },
  });
}
