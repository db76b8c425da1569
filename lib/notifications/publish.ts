import type { Context } from "hono";
import type { AppEnv } from "../http/app-env.ts";
import { rootLogger } from "../log.ts";
import type { NotificationMessage } from "./message.ts";

/**
 * Sends notifications through the queue after the response: `waitUntil` keeps the send alive past the
 * response and its outcome can never change it. A failed send is retried twice, then logged.
 */
export function publishAfterResponse(c: Context<AppEnv>, messages: NotificationMessage[]): void {
  publishNotifications(c.env.NOTIFICATIONS, c.executionCtx, messages);
}

/** The same for a worker without a Hono context (the payments provider's events worker). */
export function publishNotifications(
  queue: Queue<unknown> | undefined,
  ctx: { waitUntil(promise: Promise<unknown>): void },
  messages: NotificationMessage[],
): void {
  if (messages.length === 0) return;
  if (!queue) {
    rootLogger.error("no NOTIFICATIONS queue bound; notifications dropped");
    return;
  }
  const send = async () => {
    for (let attempt = 1; attempt <= 3; attempt++) {
      try {
        await queue.sendBatch(messages.map((body) => ({ body, contentType: "json" as const })));
        return;
      } catch (error) {
        if (attempt === 3) {
          rootLogger.error("notification send failed", error);
        }
      }
    }
  };
  ctx.waitUntil(send());
}
