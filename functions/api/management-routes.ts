import type { RouteRegistration } from "./base-app.ts";
import { describeEventsWorker } from "./openapi-document.ts";
import { registerAnalyticsSources } from "./routes/programs/analytics-sources.ts";
import { registerApiKeys } from "./routes/programs/api-keys.ts";
import { registerHeldCommissions } from "./routes/programs/held-commissions.ts";
import { registerPartnersAndLinks } from "./routes/programs/partners-links.ts";
import { registerPrograms } from "./routes/programs/programs.ts";
import { registerReadiness } from "./routes/programs/readiness.ts";
import { registerProgramSettings } from "./routes/programs/settings.ts";
import { registerStripeConnect } from "./routes/programs/stripe-connect.ts";
import { registerWebhookEndpoints } from "./routes/programs/webhooks.ts";

/**
 * The API worker's routes (`functions/api/index.ts`): the program-key reads (readiness, analytics), and the
 * programs with their settings, keys, partners and links, webhooks, held commissions and the payments
 * provider's Connect. Every path that is neither the tracking worker's nor the console worker's
 * (functions/worker-paths.ts) reaches this worker.
 */
export const managementRoutes: readonly RouteRegistration[] = [
  registerReadiness,
  registerAnalyticsSources,
  describeEventsWorker,
  registerProgramSettings,
  registerApiKeys,
  registerPartnersAndLinks,
  registerWebhookEndpoints,
  registerHeldCommissions,
  registerPrograms,
  registerStripeConnect,
];
