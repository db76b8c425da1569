import { createApp } from "./app.ts";
import type { WorkerBindings } from "../../lib/http/app-env.ts";

const app = createApp();

export default {
  fetch: app.fetch,
} satisfies ExportedHandler<WorkerBindings>;
