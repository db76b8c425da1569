import type { Config } from "../config/env.ts";
import { rootLogger } from "../log.ts";

/**
 * Whether this worker may sign and send webhooks. A deployed worker must seal the endpoints' secrets at rest,
 * so without WEBHOOK_SECRET_KEY it sends nothing: the cron leaves due deliveries in the outbox and the consumer
 * leaves queued ones there, to go out once the key is set (none is lost, the outbox owns them). The local
 * stack and the tests opt out with `WEBHOOK_SECRETS_UNSEALED=allow`, so they need no configuration.
 */
export function webhookSigningKeyMissing(
  config: Pick<Config, "webhookSecretKey" | "webhookSecretsUnsealedAllowed">,
): boolean {
  return !config.webhookSecretKey && !config.webhookSecretsUnsealedAllowed;
}

export const SIGNING_KEY_MISSING_LOG =
  "webhook deliveries paused: WEBHOOK_SECRET_KEY is not set (wrangler secret put WEBHOOK_SECRET_KEY)";

/** The webhooks queue for the cron's outbox sweep, or none (and a logged error) while the key is missing. */
export function webhooksQueueWhenSigningAllowed(
  config: Pick<Config, "webhookSecretKey" | "webhookSecretsUnsealedAllowed">,
  queue: Queue<unknown> | undefined,
): Queue<unknown> | undefined {
  if (!webhookSigningKeyMissing(config)) return queue;
  if (queue) rootLogger.error(SIGNING_KEY_MISSING_LOG);
  return undefined;
}
