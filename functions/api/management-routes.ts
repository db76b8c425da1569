import type { RouteRegistration } from "./base-app.ts";
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
import { registerTracking } from "./routes/tracking/index.ts";

/**
 * The API worker's routes (`functions/api/index.ts`): readiness and analytics, sign-in, the command line,
 * settings, keys, partners, webhooks, the dashboard and the docs. Their test events reach the tracking
 * routes through the tracking worker's service binding (`routes/tracking/tracking-worker-calls.ts`).
 */
export const managementRoutes: readonly RouteRegistration[] = [
  registerReadiness,
  registerAnalyticsSources,
  registerSignIn,
  registerSession,
  registerCli,
  describeEventsWorker,
  registerProgramSettings,
  registerApiKeys,
  registerPartnersAndLinks,
  registerWebhookEndpoints,
  registerHeldCommissions,
  registerPrograms,
  registerTracking,
  registerStripeConnect,
  registerDashboard,
  registerDocs,
];
