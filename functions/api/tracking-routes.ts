import type { RouteRegistration } from "./base-app.ts";
import { registerClick } from "./routes/track/click.ts";
import { registerConfig } from "./routes/track/config.ts";
import { registerLead } from "./routes/track/lead.ts";
import { registerRefund } from "./routes/track/refund.ts";
import { registerSale } from "./routes/track/sale.ts";
import { registerVisit } from "./routes/track/visit.ts";
import { registerTrackerScript } from "./routes/tracker-script.ts";

/**
 * The tracking worker's routes (`functions/tracking/index.ts`): the four events, the browser tracker's
 * visit and config, and its script. Their paths are `TRACKING_WORKER_PATHS` (functions/worker-paths.ts).
 */
export const trackingRoutes: readonly RouteRegistration[] = [
  registerClick,
  registerLead,
  registerSale,
  registerRefund,
  registerVisit,
  registerConfig,
  registerTrackerScript,
];
