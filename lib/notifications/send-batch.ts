import type { NotificationMessage } from "./message.ts";

/** Cloudflare Queues take at most 100 messages per `sendBatch`. */
const maxBatch = 100;

/** Sends any number of notifications, in chunks the queue accepts, retrying each chunk twice. */
export async function sendNotifications(
  queue: Queue<unknown>,
  messages: NotificationMessage[],
): Promise<void> {
  for (let start = 0; start < messages.length; start += maxBatch) {
    const chunk = messages
      .slice(start, start + maxBatch)
      .map((body) => ({ body, contentType: "json" as const }));
    for (let attempt = 1; ; attempt++) {
      try {
        await queue.sendBatch(chunk);
        break;
      } catch (error) {
        if (attempt >= 3) throw error;
      }
    }
  }
}
