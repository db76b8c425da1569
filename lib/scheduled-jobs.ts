import { rollUpAnalytics } from "./analytics/rollups.ts";
import type { Clock } from "./clock.ts";
import { approveDueCommissions } from "./commissions/approve-due-commissions.ts";
import { repairMissingCommissions } from "./commissions/repair-missing-commissions.ts";
import type { Database } from "./db/client.ts";
import { scanFraudSignals } from "./fraud/scan-fraud-signals.ts";
import { rootLogger } from "./log.ts";
import { sendNotifications } from "./notifications/send-batch.ts";
import { applyPayloadRetention } from "./stripe/payload-retention.ts";
import { dispatchDueWebhooks } from "./webhooks/dispatch-due.ts";
import { applyWebhookRetention } from "./webhooks/retention.ts";

/**
 * What the cron trigger runs (and the provider payloads' retention, `lib/stripe/payload-retention.ts`). Each job is idempotent and safe to run concurrently with itself; the
 * notifications they produce go through the queue like the request paths' ones.
 */
export async function runScheduledJobs(
  db: Database,
  clock: Clock,
  notify: Queue<unknown> | undefined,
  cron?: string,
  webhooks?: Queue<unknown>,
): Promise<Record<string, number>> {
  const now = clock.now();
  if (cron === analyticsRollupCron) {
    const webhooksDispatched = await dispatchDueWebhooks(db, webhooks, now);
    const rollup = await rollUpAnalytics(db, now);
    const fraud = await scanFraudSignalsLogged(db, now);
    return { rollupPrograms: rollup.programs, rollupRows: rollup.rows, webhooksDispatched, ...fraud };
  }
  const commissionsRepaired = await repairMissingCommissions(db, now);
  // Before approval: a program holding flagged commissions approves only scanned ones.
  const fraud = await scanFraudSignalsLogged(db, now);
  const approval = await approveDueCommissions(db, now);
  if (notify && approval.notifications.length > 0) {
    try {
      await sendNotifications(notify, approval.notifications);
    } catch (error) {
      rootLogger.error("approval notifications not sent", error);
    }
  }
  const retention = await applyPayloadRetention(db, now);
  const webhookRetention = await applyWebhookRetention(db, now);
  return {
    commissionsRepaired,
    commissionsApproved: approval.approved,
    ...retention,
    ...webhookRetention,
    ...fraud,
  };
}

/** The fraud scan, whose failure (a deadlock with a concurrent run, say) waits for the next run, blocking no other job. */
async function scanFraudSignalsLogged(db: Database, now: Date): Promise<Record<string, number>> {
  try {
    return { ...(await scanFraudSignals(db, now)) };
  } catch (error) {
    rootLogger.error("fraud scan failed", error);
    return {};
  }
}

/**
 * The every-minute trigger (wrangler.toml) runs the webhook dispatch, the analytics rollup
 * (`lib/analytics/rollups.ts`) and the fraud scan (`lib/fraud/`), not the approval.
 */
export const analyticsRollupCron = "* * * * *";
