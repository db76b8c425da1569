import { systemClock } from "../../lib/clock.ts";
import { readConfig } from "../../lib/config/env.ts";
import { databaseFor } from "../../lib/db/client.ts";
import type { WorkerBindings } from "../../lib/http/app-env.ts";
import { rootLogger } from "../../lib/log.ts";
import { consumeNotifications } from "../../lib/notifications/consumer.ts";
import { runScheduledJobs } from "../../lib/scheduled-jobs.ts";
import { consumeWebhookDeliveries, webhooksQueueName } from "../../lib/webhooks/consumer.ts";
import { webhooksQueueWhenSigningAllowed } from "../../lib/webhooks/signing-key-gate.ts";
import { createBaseApp } from "./base-app.ts";
import { managementRoutes } from "./management-routes.ts";

/**
 * The API worker: every route but the tracking worker's (functions/tracking) and the console worker's
 * (functions/console), the crons and the queue consumers (notifications, outbound webhooks).
 */
const app = createBaseApp(managementRoutes);

export default {
  fetch: app.fetch,
  /** After-response notifications (partner in-app, advertiser manual-review warnings). */
  /** Cron: repair sales stored without their commission, approve commissions whose hold ended. */
  /** Every minute: roll up the analytics of the hours that ended (`lib/scheduled-jobs.ts` dispatches). */
  async scheduled(controller, env, ctx) {
    const config = readConfig(env);
    ctx.waitUntil(
      runScheduledJobs(
        databaseFor(config),
        systemClock,
        env.NOTIFICATIONS,
        controller.cron,
        webhooksQueueWhenSigningAllowed(config, env.WEBHOOKS),
      ).then((counts) => rootLogger.info("scheduled jobs done", counts)),
    );
  },
  async queue(batch, env, _ctx) {
    const config = readConfig(env);
    if (batch.queue === webhooksQueueName)
      return consumeWebhookDeliveries(batch, databaseFor(config), systemClock, config);
    await consumeNotifications(batch, databaseFor(config));
  },
} satisfies ExportedHandler<WorkerBindings>;
