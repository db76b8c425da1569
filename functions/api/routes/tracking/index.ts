import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../../../lib/http/app-env.ts";
import { registerTrackingCheckTestEvents } from "./check-test-events.ts";
import { registerTrackingEvents } from "./events.ts";
import { registerTrackingPerformance } from "./performance.ts";
import { registerTrackingReadiness } from "./readiness.ts";
import { registerTrackingRunVerification } from "./run-verification.ts";
import { registerTrackingStatus } from "./status.ts";
import { registerTrackingTest } from "./test-event.ts";

/** The dashboard's routes (`/api/tracking/*`): signed-in session plus an active membership on the program. */
export function registerTracking(app: OpenAPIHono<AppEnv>): void {
  registerTrackingStatus(app);
  registerTrackingEvents(app);
  registerTrackingPerformance(app);
  registerTrackingReadiness(app);
  registerTrackingTest(app);
  registerTrackingCheckTestEvents(app);
  registerTrackingRunVerification(app);
}
