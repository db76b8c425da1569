import type { WorkerBindings } from "../../lib/http/app-env.ts";
import { createBaseApp } from "../api/base-app.ts";
import { consoleRoutes } from "../api/console-routes.ts";

/**
 * The console worker: what a person signs in to (the dashboard, the sign-in, the command line's login and
 * endpoints) and the docs (`CONSOLE_WORKER_PATHS`). A worker of its own so that the ID-token check, the
 * dashboard's page and the command line stay out of the API worker's cold start, and the program-key API out
 * of this one's. Its test events go through the tracking worker's service binding; crons and queue consumers
 * are the API worker's.
 */
const app = createBaseApp(consoleRoutes);

export default {
  fetch: app.fetch,
} satisfies ExportedHandler<WorkerBindings>;
