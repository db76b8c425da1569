import { OpenAPIHono } from "@hono/zod-openapi";
import { badRequest, platformError } from "../../lib/errors/api-error.ts";
import { defaultErrorPolicy, renderError } from "../../lib/errors/envelopes.ts";
import { handleError } from "../../lib/errors/on-error.ts";
import type { AppEnv } from "../../lib/http/app-env.ts";
import { dependencies } from "../../lib/http/dependencies.ts";
import { requestId } from "../../lib/http/request-id.ts";
import { firstIssueMessage } from "../../lib/validation/first-issue.ts";
import { assertStorableText } from "../../lib/validation/storable-text.ts";
import { describeEventsWorker } from "./openapi-document.ts";
import { registerSession } from "./routes/auth/session.ts";
import { registerSignIn } from "./routes/auth/sign-in.ts";
import { registerCli } from "./routes/cli/index.ts";
import { registerDashboard } from "./routes/dashboard/index.tsx";
import { registerDocs } from "./routes/docs.ts";
import { registerAnalyticsSources } from "./routes/programs/analytics-sources.ts";
import { registerApiKeys } from "./routes/programs/api-keys.ts";
import { registerHeldCommissions } from "./routes/programs/held-commissions.ts";
import { registerPartnersAndLinks } from "./routes/programs/partners-links.ts";
import { registerPrograms } from "./routes/programs/programs.ts";
import { registerReadiness } from "./routes/programs/readiness.ts";
import { registerProgramSettings } from "./routes/programs/settings.ts";
import { registerStripeConnect } from "./routes/programs/stripe-connect.ts";
import { registerWebhookEndpoints } from "./routes/programs/webhooks.ts";
import { registerClick } from "./routes/track/click.ts";
import { registerConfig } from "./routes/track/config.ts";
import { registerLead } from "./routes/track/lead.ts";
import { registerRefund } from "./routes/track/refund.ts";
import { registerSale } from "./routes/track/sale.ts";
import { registerVisit } from "./routes/track/visit.ts";
import { registerTrackerScript } from "./routes/tracker-script.ts";
import { registerTracking } from "./routes/tracking/index.ts";

/** The API worker's Hono app: cross-cutting middleware, then one registration per endpoint. */
export function createApp(): OpenAPIHono<AppEnv> {
  const app = new OpenAPIHono<AppEnv>({
    defaultHook: (result) => {
      if (!result.success) throw badRequest(firstIssueMessage(result.error));
      assertStorableText(result.data);
    },
  });
  app.use("*", requestId, dependencies);
  app.onError(handleError);
  app.notFound((c) => c.json(renderError(platformError(404, "Not found"), defaultErrorPolicy), 404));

  app.get("/healthz", (c) => c.json({ ok: true }));
  app.openAPIRegistry.registerComponent("securitySchemes", "bearerAuth", { type: "http", scheme: "bearer" });
  app.openAPIRegistry.registerComponent("securitySchemes", "sessionCookie", {
    type: "apiKey",
    in: "cookie",
    name: "__Host-affiliate_session",
  });
  registerClick(app);
  registerLead(app);
  registerSale(app);
  registerRefund(app);
  registerVisit(app);
  registerConfig(app);
  registerReadiness(app);
  registerAnalyticsSources(app);
  registerTrackerScript(app);
  registerSignIn(app);
  registerSession(app);
  registerCli(app);
  describeEventsWorker(app);
  registerProgramSettings(app);
  registerApiKeys(app);
  registerPartnersAndLinks(app);
  registerWebhookEndpoints(app);
  registerHeldCommissions(app);
  registerPrograms(app);
  registerTracking(app);
  registerStripeConnect(app);
  registerDashboard(app);
  registerDocs(app);
  return app;
}
