import type { Database } from "../db/client.ts";
import { withConflictRetry } from "../db/errors.ts";
import type { NotificationMessage } from "../notifications/message.ts";
import { isPlausibleEmail, type StoredEmail, storedEmail } from "../tracking/email.ts";
import { writeSale } from "../tracking/sale/sale-store.ts";
import { decideProviderSale } from "./decide-provider-sale.ts";
import type { ProviderPayment, ProviderReversal } from "./provider-events.ts";
import {
  applyProviderReversal,
  deferReversal,
  markReversalsApplied,
  pendingReversalsFor,
  type ReversalResult,
} from "./provider-reversals.ts";
import { readProviderSaleFacts } from "./provider-sale-store.ts";

const saleUniqueConstraint = "affiliate_sale_events_processor_event_id_unique";

export interface Processed {
  /** Stored on the event row and answered to the provider. */
  outcome: string;
  detail?: Record<string, unknown>;
  notifications: NotificationMessage[];
}

function log(level: "info" | "warn", msg: string, fields: Record<string, unknown>): void {
  console.log(JSON.stringify({ level, msg, ...fields }));
}

/**
 * A payment event: attribution (spec section 6 order), then the sale endpoint's rules and write. Every
 * write is idempotent by a unique key (the payment id for the sale, (program, click) for a new customer),
 * so a retried or concurrent delivery, or the same payment arriving by the sale endpoint, records it once.
 */
export async function processPayment(
  db: Database,
  ids: { eventId: string; programId: number },
  payment: ProviderPayment,
  now: Date,
): Promise<Processed> {
  const email: StoredEmail | null =
    payment.email && isPlausibleEmail(payment.email) ? await storedEmail(payment.email) : null;
  const result = await withConflictRetry(
    async () => {
      const facts = await readProviderSaleFacts(db, {
        programId: ids.programId,
        paymentId: payment.paymentId,
        productId: payment.productId,
        clickId: payment.metadata.clickId,
        clientReferenceId: payment.clientReferenceId,
        emailHash: email?.hash ?? null,
        providerCustomerId: payment.providerCustomerId,
        customerKey: payment.metadata.customerKey,
      });
      const decision = decideProviderSale(payment, facts, email, { eventId: ids.eventId, now });
      if (decision.outcome !== "record") return { decision, saleId: null };
      const written = await writeSale(db, decision.decision, now);
      return { decision, saleId: written.saleId, commissionId: written.commissionId };
    },
    { retryOnConstraints: [saleUniqueConstraint] },
  );

  const { decision } = result;
  const fields = { event_id: ids.eventId, program_id: ids.programId, payment_id: payment.paymentId };
  switch (decision.outcome) {
    case "skipped":
      log("info", "payment skipped", { ...fields, reason: decision.reason });
      return { outcome: "skipped", detail: { reason: decision.reason }, notifications: [] };
    case "not_attributed":
      log("info", "payment not attributed", { ...fields, reason: decision.reason });
      return { outcome: "not_attributed", detail: { reason: decision.reason }, notifications: [] };
    case "duplicate": {
      log("info", "payment already recorded", {
        ...fields,
        sale_id: decision.saleId,
        source: decision.source,
      });
      // A delivery that failed after recording the sale left its kept reversals unapplied: apply them now.
      const notifications =
        decision.source === "stripe" ? await applyPending(db, ids.programId, payment.paymentId, now) : [];
      return {
        outcome: "duplicate",
        detail: {
          sale_id: decision.saleId,
          recorded_by: decision.source === "api" ? "sale endpoint" : "events",
        },
        notifications,
      };
    }
    case "record": {
      const test = decision.decision.test;
      log("info", test ? "test sale recorded" : "sale recorded", {
        ...fields,
        sale_id: result.saleId,
        attributed_by: decision.attributedBy,
      });
      const notifications = await applyPending(db, ids.programId, payment.paymentId, now);
      return {
        outcome: test ? "test_recorded" : "recorded",
        detail: {
          sale_id: result.saleId,
          commission_id: "commissionId" in result ? result.commissionId : null,
          attributed_by: decision.attributedBy,
        },
        notifications,
      };
    }
  }
}

/**
 * Refunds and disputes that arrived before their sale was recorded. Read AFTER the sale is written: a
 * reversal kept meanwhile is then seen here, or its own event saw the sale (see `processReversal`).
 */
async function applyPending(
  db: Database,
  programId: number,
  paymentId: string,
  now: Date,
): Promise<NotificationMessage[]> {
  const pending = await pendingReversalsFor(db, programId, paymentId);
  const notifications: NotificationMessage[] = [];
  for (const { eventId, reversal } of pending) {
    const result = await applyProviderReversal(db, programId, reversal, now);
    if ("notifications" in result) notifications.push(...result.notifications);
    log("info", "kept reversal applied", {
      event_id: eventId,
      payment_id: paymentId,
      outcome: result.outcome,
    });
  }
  await markReversalsApplied(
    db,
    pending.map((p) => p.eventId),
    now,
  );
  return notifications;
}

/**
 * A refund or dispute: the refund endpoint's reversal logic on the sale the provider payment recorded.
 * Out of order (no sale yet): the reversal is kept and answered 200; the payment event that records the
 * sale applies it. The sale is looked up again after keeping it, so a sale written meanwhile is not missed.
 */
export async function processReversal(
  db: Database,
  ids: { eventId: string; programId: number },
  reversal: ProviderReversal,
  now: Date,
): Promise<Processed> {
  const fields = { event_id: ids.eventId, program_id: ids.programId, payment_ids: reversal.paymentIds };
  let result: ReversalResult = await applyProviderReversal(db, ids.programId, reversal, now);
  if (result.outcome === "no_sale" && result.apiSale) {
    // Spec section 6: a sale recorded by the sale endpoint is not linked to the provider's payment.
    log("info", "reversal ignored: the sale was recorded by the sale endpoint", fields);
    return { outcome: "not_linked", notifications: [] };
  }
  if (result.outcome === "no_sale") {
    await deferReversal(db, ids.programId, ids.eventId, reversal);
    result = await applyProviderReversal(db, ids.programId, reversal, now);
    if (result.outcome === "no_sale") {
      log("info", "reversal kept until its sale is recorded", fields);
      return { outcome: "deferred", notifications: [] };
    }
    await markReversalsApplied(db, [ids.eventId], now);
  }
  log("info", "reversal processed", { ...fields, kind: reversal.kind, outcome: result.outcome });
  return {
    outcome: result.outcome,
    ...(result.outcome === "skipped" ? { detail: { reason: result.reason } } : {}),
    notifications: "notifications" in result ? result.notifications : [],
  };
}
