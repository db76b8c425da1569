import apiWorker from "../../functions/api/index.ts";
import consoleWorker from "../../functions/console/index.ts";
import trackingWorker from "../../functions/tracking/index.ts";
import { workerForPath } from "../../functions/worker-paths.ts";
import type { WorkerBindings } from "../../lib/http/app-env.ts";

const workers = { api: apiWorker, console: consoleWorker, tracking: trackingWorker };

/**
 * The workers project's main module (SELF): the three HTTP workers behind one address, each request given to
 * the worker the zone's routes give it to (functions/worker-paths.ts), as `npm run dev` does with Miniflare
 * routes. The crons and queue consumers are the API worker's. The console worker's `TRACKING` binding points
 * back here (vitest.config.ts), so its test events reach the tracking worker's code.
 */
export default {
  fetch(request: Request, env: WorkerBindings, ctx: ExecutionContext) {
    const url = new URL(request.url);
    return workers[workerForPath(url.pathname + url.search)].fetch(request, env, ctx);
  },
  scheduled: apiWorker.scheduled,
  queue: apiWorker.queue,
} satisfies ExportedHandler<WorkerBindings>;
