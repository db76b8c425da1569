import type { RouteRegistration } from "./base-app.ts";
import { registerSession } from "./routes/auth/session.ts";
import { registerSignIn } from "./routes/auth/sign-in.ts";
import { registerCli } from "./routes/cli/index.ts";
import { registerDashboard } from "./routes/dashboard/index.tsx";
import { registerDocs } from "./routes/docs.ts";
import { registerTracking } from "./routes/tracking/index.ts";

/**
 * The console worker's routes (`functions/console/index.ts`): sign-in and session, the command line's login
 * and endpoints, the dashboard's page and its `/api/tracking/*` endpoints, and the docs. Their paths are
 * `CONSOLE_WORKER_PATHS` (functions/worker-paths.ts). Their test events reach the tracking routes through
 * the tracking worker's service binding (`routes/tracking/tracking-worker-calls.ts`).
 */
export const consoleRoutes: readonly RouteRegistration[] = [
  registerSignIn,
  registerSession,
  registerCli,
  registerTracking,
  registerDashboard,
  registerDocs,
];
