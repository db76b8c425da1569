import apiWorker from "../../functions/api/index.ts";
import trackingWorker from "../../functions/tracking/index.ts";
import { isTrackingWorkerPath } from "../../functions/tracking/paths.ts";
import type { WorkerBindings } from "../../lib/http/app-env.ts";

/**
 * The workers project's main module (SELF): both HTTP workers behind one address, each request given to the
 * worker the zone's routes give it to (`TRACKING_WORKER_PATHS`), as `npm run dev` does with Miniflare routes.
 * The crons and queue consumers are the API worker's. The API worker's `TRACKING` binding points back here
 * (vitest.config.ts), so its test events reach the tracking worker's code.
 */
export default {
  fetch(request: Request, env: WorkerBindings, ctx: ExecutionContext) {
    const url = new URL(request.url);
    const worker = isTrackingWorkerPath(url.pathname + url.search) ? trackingWorker : apiWorker;
    return worker.fetch(request, env, ctx);
  },
  scheduled: apiWorker.scheduled,
  queue: apiWorker.queue,
} satisfies ExportedHandler<WorkerBindings>;
