import { readConfig } from "../../lib/config/env.ts";
import { databaseFor } from "../../lib/db/client.ts";
import type { WorkerBindings } from "../../lib/http/app-env.ts";
import { consumeNotifications } from "../../lib/notifications/consumer.ts";
import { createApp } from "./app.ts";

const app = createApp();

export default {
  fetch: app.fetch,
  /** After-response notifications (partner in-app, advertiser manual-review warnings). */
  async queue(batch, env, _ctx) {
    await consumeNotifications(batch, databaseFor(readConfig(env)));
  },
} satisfies ExportedHandler<WorkerBindings>;
