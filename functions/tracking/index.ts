import type { WorkerBindings } from "../../lib/http/app-env.ts";
import { createBaseApp } from "../api/base-app.ts";
import { trackingRoutes } from "../api/tracking-routes.ts";

/**
 * The tracking worker: click, lead, sale, refund, the browser tracker's visit and config, and its script
 * (`TRACKING_WORKER_PATHS`, functions/worker-paths.ts). The hot path in a worker of its own, so its cold
 * start carries none of the dashboard, sign-in or settings code. Notifications go through the API worker's
 * queue; crons and queue consumers are the API worker's.
 */
const app = createBaseApp(trackingRoutes);

export default {
  fetch: app.fetch,
} satisfies ExportedHandler<WorkerBindings>;
