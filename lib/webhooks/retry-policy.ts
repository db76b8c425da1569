/**
 * Retries: exponential backoff from 30 seconds, doubling, capped at 6 hours between attempts, for three days
 * after the event; a delivery still failing then is given up, and an endpoint that has failed every attempt
 * for three days is disabled (its owners are notified). The cron hands due deliveries to the queue every
 * minute, so a delay shorter than that waits for the next minute.
 */
export const giveUpAfterMs = 3 * 24 * 60 * 60 * 1000;

/** The wait after the `failedAttempts`-th failed attempt (1-based): 30 s, 60 s, 2 min ... 6 h. */
export function webhookRetryDelaySeconds(failedAttempts: number): number {
  return Math.min(6 * 60 * 60, 30 * 2 ** Math.max(0, failedAttempts - 1));
}

/** How long the queue owns a delivery it was handed before the cron may hand it over again. */
export const leaseSeconds = 5 * 60;

/** A receiver taking longer than this counts as a failed attempt. */
export const attemptTimeoutMs = 15_000;
