import { createExecutionContext, createScheduledController, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import worker from "../../functions/api/index.ts";

/**
 * Runs the API worker's scheduled handler once for `cron` (wrangler.toml: the five-minute jobs by default,
 * `* * * * *` for the minute's), and waits for everything it started.
 */
export async function runCron(cron: "*/5 * * * *" | "* * * * *" = "*/5 * * * *"): Promise<void> {
  const ctx = createExecutionContext();
  await worker.scheduled(createScheduledController({ cron, scheduledTime: Date.now() }), env, ctx);
  await waitOnExecutionContext(ctx);
}
