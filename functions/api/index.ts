import type { WorkerBindings } from "../../lib/http/app-env.ts";
import { createApp } from "./app.ts";

const app = createApp();

export default {
  fetch: app.fetch,
} satisfies ExportedHandler<WorkerBindings>;
