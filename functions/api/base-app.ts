import { OpenAPIHono } from "@hono/zod-openapi";
import { bodyRefusal, platformError, typedError } from "../../lib/errors/api-error.ts";
import { defaultErrorPolicy, renderError } from "../../lib/errors/envelopes.ts";
import { handleError } from "../../lib/errors/on-error.ts";
import type { AppEnv } from "../../lib/http/app-env.ts";
import { dependencies } from "../../lib/http/dependencies.ts";
import { requestId } from "../../lib/http/request-id.ts";
import { firstIssueMessage } from "../../lib/validation/first-issue.ts";
import { assertStorableText } from "../../lib/validation/storable-text.ts";

/** Adds one endpoint (or a few that belong together) to an app. */
export type RouteRegistration = (app: OpenAPIHono<AppEnv>) => void;

/**
 * A Hono app with the cross-cutting middleware every worker of ours shares (request id, dependencies, the
 * error envelopes, the 404, `/healthz`), then the given registrations. Each worker passes only its own
 * routes, so a worker bundles only the code they reach (README "Worker size").
 */
export function createBaseApp(registrations: readonly RouteRegistration[]): OpenAPIHono<AppEnv> {
  const app = new OpenAPIHono<AppEnv>({
    defaultHook: (result) => {
      if (!result.success) throw bodyRefusal(firstIssueMessage(result.error));
      assertStorableText(result.data);
    },
  });
  app.use("*", requestId, dependencies);
  app.onError(handleError);
  // In the envelope of the path's own middleware, when it has one: another method on the sale or refund path
  // answers 404 with the stable `error.code` (not_found) every error of those two carries, and on readiness,
  // whose errors all use the typed envelope, a typed `not_found`.
  app.notFound((c) => {
    const policy = c.get("errorPolicy") ?? defaultErrorPolicy;
    const error = policy.typedFailure
      ? typedError(404, "not_found", "Not found")
      : platformError(404, "Not found");
    return c.json(renderError(error, policy), 404);
  });

  app.get("/healthz", (c) => c.json({ ok: true }));
  app.openAPIRegistry.registerComponent("securitySchemes", "bearerAuth", { type: "http", scheme: "bearer" });
  app.openAPIRegistry.registerComponent("securitySchemes", "sessionCookie", {
    type: "apiKey",
    in: "cookie",
    name: "__Host-affiliate_session",
  });
  for (const register of registrations) register(app);
  return app;
}
