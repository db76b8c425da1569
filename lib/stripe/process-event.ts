import type { Database } from "../db/client.ts";
import { withConflictRetry } from "../db/errors.ts";
import { rootLogger, scalarFields } from "../log.ts";
import { type RefundPlan, refundSale } from "../refunds/refund-sale.ts";
import { paymentNamespace, saleIdConstraint } from "../sales/payment-namespace.ts";
import { writeSaleWithFallback } from "../sales/record-sale.ts";
import { isPlausibleEmail, type StoredEmail, storedEmail } from "../tracking/email.ts";
import {
  decideCustomerBinding,
  decideProviderSale,
  type ProviderSaleDecision,
} from "./decide-provider-sale.ts";
import {
  type AliasedSale,
  decideInvoicePayment,
  flagKeptSaleForCommission,
  readInvoicePaymentFacts,
  writeAliases,
} from "./payment-aliases.ts";
import {
  type ProviderInvoicePayment,
  type ProviderPayment,
  type ProviderReversal,
  type ProviderSubscriptionCheckout,
  paymentIdsOf,
} from "./provider-events.ts";
import {
  applyProviderReversal,
  deferReversal,
  markReversalsApplied,
  pendingReversalsForSale,
  type ReversalResult,
  readReversalFacts,
  reversalResultOf,
  reversalSaleById,
} from "./provider-reversals.ts";
import { readProviderSaleFacts } from "./provider-sale-store.ts";
import {
  keepPayment,
  keptPaymentsFor,
  resolveKeptPayment,
  writeCustomerBinding,
} from "./subscription-checkout-store.ts";

export interface Processed {
  /** Stored on the event row and answered to the provider. */
  outcome: string;
  detail?: Record<string, unknown>;
}

export interface EventIds {
  eventId: string;
  programId: number;
}

function log(level: "info" | "warn", msg: string, fields: Record<string, unknown>): void {
  rootLogger[level](msg, scalarFields(fields));
}

async function emailOf(raw: string | null): Promise<StoredEmail | null> {
  return raw && isPlausibleEmail(raw) ? storedEmail(raw) : null;
}

/**
 * A payment event: attribution (spec section 6 order), then the sale endpoint's rules and write. Every
 * write is idempotent by a unique key (the payment id for the sale, (program, click) for a new customer),
 * so a retried or concurrent delivery, or the same payment arriving by the sale endpoint, records it once.
 *
 * A subscription's first invoice that matches nothing is kept (`stripe_pending_payments`) until its
 * checkout binds the buyer (`processSubscriptionCheckout`), unless `keep` is false (that re-run itself).
 */
export async function processPayment(
  db: Database,
  ids: EventIds,
  payment: ProviderPayment,
  now: Date,
  options: { keep?: boolean } = {},
): Promise<Processed> {
  const email = await emailOf(payment.email);
  const paymentIds = paymentIdsOf(payment);
  const attempt = () =>
    withConflictRetry(
      async () => {
        const facts = await readProviderSaleFacts(db, {
          programId: ids.programId,
          paymentIds,
          namespace: paymentNamespace(!payment.livemode, ids.programId),
          productId: payment.productId,
          clickId: payment.metadata.clickId,
          clientReferenceId: payment.clientReferenceId,
          emailHash: email?.hash ?? null,
          providerCustomerId: payment.providerCustomerId,
          customerKey: payment.metadata.customerKey,
        });
        const decision = decideProviderSale(payment, facts, email, { eventId: ids.eventId, now });
        if (decision.outcome !== "record") return { decision, saleId: null, commissionId: null };
        const written = await writeSaleWithFallback(
          db,
          decision.decision,
          now,
          rootLogger.with({ event_id: ids.eventId }),
          payment.aliases,
        );
        return { decision, saleId: written.saleId, commissionId: written.commissionId };
      },
      { retryOnConstraints: [saleIdConstraint] },
    );

  let result = await attempt();
  if ((options.keep ?? true) && isKeptFirstInvoice(payment, result.decision)) {
    await keepPayment(db, ids.programId, ids.eventId, payment);
    // Write first, then look again: a checkout that bound the buyer meanwhile did not see this one kept.
    result = await attempt();
    if (isKeptFirstInvoice(payment, result.decision)) {
      log("info", "first invoice kept until its checkout binds the buyer", {
        event_id: ids.eventId,
        program_id: ids.programId,
        payment_id: payment.paymentId,
      });
      return {
        outcome: "deferred",
        detail: { reason: "subscription's first invoice kept until its checkout binds the buyer" },
      };
    }
    const processed = await paymentOutcome(db, ids, payment, result, now);
    await resolveKeptPayment(db, ids.eventId, processed.outcome, now);
    return processed;
  }
  return paymentOutcome(db, ids, payment, result, now);
}

/** What a payment event's decision and write come to: the answer, and the kept reversals then applied. */
async function paymentOutcome(
  db: Database,
  ids: EventIds,
  payment: ProviderPayment,
  result: { decision: ProviderSaleDecision; saleId: number | null; commissionId: number | null },
  now: Date,
): Promise<Processed> {
  const { decision } = result;
  const paymentIds = paymentIdsOf(payment);
  const fields = { event_id: ids.eventId, program_id: ids.programId, payment_id: payment.paymentId };
  switch (decision.outcome) {
    case "skipped":
      log("info", "payment skipped", { ...fields, reason: decision.reason });
      return { outcome: "skipped", detail: { reason: decision.reason } };
    case "not_attributed":
      log("info", "payment not attributed", { ...fields, reason: decision.reason });
      return { outcome: "not_attributed", detail: { reason: decision.reason } };
    case "duplicate": {
      log("info", "payment already recorded", {
        ...fields,
        sale_id: decision.saleId,
        source: decision.source,
      });
      // A delivery that failed after recording the sale left its kept reversals unapplied: apply them now.
      if (decision.source === "stripe") {
        await applyPending(db, ids.programId, decision.saleId, paymentIds, now);
      }
      return {
        outcome: "duplicate",
        detail: {
          sale_id: decision.saleId,
          recorded_by: decision.source === "api" ? "sale endpoint" : "events",
        },
      };
    }
    case "record": {
      const test = decision.decision.test;
      const saleId = result.saleId as number;
      log("info", test ? "test sale recorded" : "sale recorded", {
        ...fields,
        sale_id: saleId,
        attributed_by: decision.attributedBy,
      });
      await applyPending(db, ids.programId, saleId, paymentIds, now);
      return {
        outcome: test ? "test_recorded" : "recorded",
        detail: { sale_id: saleId, commission_id: result.commissionId, attributed_by: decision.attributedBy },
      };
    }
  }
}

/** A live subscription's first invoice that matched no click, lead or customer at all. */
function isKeptFirstInvoice(payment: ProviderPayment, decision: ProviderSaleDecision): boolean {
  return (
    payment.kind === "invoice" &&
    payment.livemode &&
    payment.billingReason === "subscription_create" &&
    decision.outcome === "not_attributed" &&
    decision.noMatch === true
  );
}

/**
 * Refunds and disputes that arrived before their sale was recorded (or before `invoice_payment.paid`
 * named the PaymentIntent they cite). Read AFTER the sale or alias is written: a reversal kept meanwhile
 * is then seen here, or its own event saw the sale (see `processReversal`).
 */
async function applyPending(
  db: Database,
  programId: number,
  saleId: number,
  paymentIds: readonly string[],
  now: Date,
): Promise<void> {
  const pending = await pendingReversalsForSale(db, programId, saleId, paymentIds);
  for (const { eventId, reversal } of pending) {
    const result = await applyProviderReversal(db, programId, reversal, now);
    log("info", "kept reversal applied", { event_id: eventId, sale_id: saleId, outcome: result.outcome });
  }
  await markReversalsApplied(
    db,
    pending.map((p) => p.eventId),
    now,
  );
}

/**
 * A refund or dispute: the refund endpoint's reversal logic on the sale the provider payment recorded.
 * Out of order (no sale yet): the reversal is kept and answered 200; the payment event that records the
 * sale applies it. The sale is looked up again after keeping it, so a sale written meanwhile is not missed.
 */
export async function processReversal(
  db: Database,
  ids: EventIds,
  reversal: ProviderReversal,
  now: Date,
): Promise<Processed> {
  const fields = { event_id: ids.eventId, program_id: ids.programId, payment_ids: reversal.paymentIds };
  let result: ReversalResult = await applyProviderReversal(db, ids.programId, reversal, now);
  if (result.outcome === "no_sale" && result.apiSale) {
    // Spec section 6: a sale recorded by the sale endpoint is not linked to the provider's payment.
    log("info", "reversal ignored: the sale was recorded by the sale endpoint", fields);
    return { outcome: "not_linked" };
  }
  if (result.outcome === "no_sale") {
    await deferReversal(db, ids.programId, ids.eventId, reversal);
    result = await applyProviderReversal(db, ids.programId, reversal, now);
    if (result.outcome === "no_sale") {
      log("info", "reversal kept until its sale is recorded", fields);
      return { outcome: "deferred" };
    }
    await markReversalsApplied(db, [ids.eventId], now);
  }
  log("info", "reversal processed", { ...fields, kind: reversal.kind, outcome: result.outcome });
  return {
    outcome: result.outcome,
    ...(result.outcome === "skipped" ? { detail: { reason: result.reason } } : {}),
  };
}

/**
 * `invoice_payment.paid`: the PaymentIntent that paid an invoice. Recorded as an alias of the invoice's
 * sale (current API versions key it by the invoice id), so refunds, disputes and the sale endpoint that
 * name the PaymentIntent find it; kept reversals naming it are applied. Before the invoice's sale exists
 * the alias is kept unlinked (the sale's write links it), written first and looked at again after. When
 * the sale endpoint recorded the PaymentIntent, the invoice id becomes its alias, so the invoice event
 * records nothing; when both were recorded already, the events' sale is reversed as a duplicate.
 */
export async function processInvoicePayment(
  db: Database,
  ids: EventIds,
  invoicePayment: ProviderInvoicePayment,
  now: Date,
): Promise<Processed> {
  const fields = {
    event_id: ids.eventId,
    program_id: ids.programId,
    invoice_id: invoicePayment.invoiceId,
    payment_ids: invoicePayment.paymentIds,
  };
  const allIds = [invoicePayment.invoiceId, ...invoicePayment.paymentIds];
  const namespace = paymentNamespace(!invoicePayment.livemode, ids.programId);
  let linkedHere = false;
  for (let look = 1; ; look++) {
    const facts = await readInvoicePaymentFacts(db, ids.programId, invoicePayment);
    const decision = decideInvoicePayment(invoicePayment, facts);
    switch (decision.action) {
      case "keep":
        if (look === 1) {
          await writeAliases(
            db,
            ids.programId,
            namespace,
            invoicePayment.invoiceId,
            invoicePayment.paymentIds,
            null,
          );
          continue;
        }
        log("info", "invoice payment kept until the invoice is recorded", fields);
        return { outcome: "alias_kept" };
      case "link":
      case "already_linked": {
        const { sale } = decision;
        if (decision.action === "link") {
          await writeAliases(db, ids.programId, namespace, decision.paymentId, decision.aliases, sale.id);
          // Write, then look again: a sale written meanwhile under one of the aliases (its id is in the
          // same index, so the alias did not land) is a duplicate of this one, seen by the next look.
          linkedHere = true;
          if (look < 3) continue;
        }
        if (sale.source === "stripe") await applyPending(db, ids.programId, sale.id, allIds, now);
        log("info", "invoice payment linked", { ...fields, sale_id: sale.id, source: sale.source });
        return {
          outcome: linkedHere ? "linked" : "already_linked",
          detail: { sale_id: sale.id, recorded_by: sale.source === "api" ? "sale endpoint" : "events" },
        };
      }
      case "duplicate": {
        if (!decision.reverse) {
          log("warn", "payment recorded twice by the sale endpoint", {
            ...fields,
            sale_ids: [decision.keep.id],
          });
          return { outcome: "recorded_twice", detail: { sale_id: decision.keep.id } };
        }
        const reversed = await reverseDuplicate(db, ids.programId, decision.reverse, decision.keep, now);
        log("warn", "payment recorded twice: the events' sale reversed", {
          ...fields,
          kept_sale_id: decision.keep.id,
          reversed_sale_id: decision.reverse.id,
          outcome: reversed.outcome,
        });
        return {
          outcome: "duplicate_reversed",
          detail: { sale_id: decision.reverse.id, duplicate_of: decision.keep.id, result: reversed.outcome },
        };
      }
    }
  }
}

/** A full reversal of the events' sale that duplicates `keep`, with the refund endpoint's logic. */
async function reverseDuplicate(
  db: Database,
  programId: number,
  duplicate: AliasedSale,
  keep: AliasedSale,
  now: Date,
): Promise<{ outcome: string }> {
  const refundReason = `duplicate of sale ${keep.id} (the same payment)`;
  const result = await refundSale(db, now, async (): Promise<RefundPlan<"no_sale">> => {
    const read = await readReversalFacts(db, programId, reversalSaleById(duplicate.id));
    if (!read.sale) return { answer: "no_sale" };
    return {
      refund: { ...read.sale, intent: { amountCents: null, refundId: null, reason: "refund", refundReason } },
    };
  });
  if ("answer" in result) return { outcome: result.answer };
  // Under a one-time commission the sale endpoint's sale may have none only because the duplicate held it:
  // its commission is then created by the scheduled repair. After the reversal, and looked at again on a
  // redelivery (a failure between the two leaves the event to be retried), so it is never lost.
  if (await flagKeptSaleForCommission(db, programId, keep, duplicate, refundReason)) {
    log("info", "the kept sale's commission left to the scheduled repair", {
      program_id: programId,
      sale_id: keep.id,
      reversed_sale_id: duplicate.id,
    });
  }
  return { outcome: reversalResultOf(result.outcome).outcome };
}

/**
 * A subscription checkout: no sale (its invoices record them) but the buyer is bound, by the spec's
 * attribution order over the session (metadata click, email, provider customer id, `client_reference_id`,
 * customer key), to the program's customer, which saves the session's provider customer id and settles
 * the click's provisional lead. Then the subscription's first invoices kept because they arrived first
 * and matched nothing are recorded (or resolved as not attributed when the session is not either).
 */
export async function processSubscriptionCheckout(
  db: Database,
  ids: EventIds,
  checkout: ProviderSubscriptionCheckout,
  now: Date,
): Promise<Processed> {
  const fields = { event_id: ids.eventId, program_id: ids.programId, session_id: checkout.sessionId };
  const email = await emailOf(checkout.email);
  const bound = await withConflictRetry(async () => {
    const facts = await readProviderSaleFacts(db, {
      programId: ids.programId,
      paymentIds: [],
      namespace: paymentNamespace(!checkout.livemode, ids.programId),
      productId: null,
      clickId: checkout.metadata.clickId,
      clientReferenceId: checkout.clientReferenceId,
      emailHash: email?.hash ?? null,
      providerCustomerId: checkout.providerCustomerId,
      customerKey: checkout.metadata.customerKey,
    });
    const decision = decideCustomerBinding(checkout, facts, email, now);
    if (decision.outcome !== "bind") return { decision, customerId: null };
    return { decision, customerId: await writeCustomerBinding(db, decision, now) };
  });

  const { decision } = bound;
  if (decision.outcome === "skipped") {
    log("info", "subscription checkout skipped", { ...fields, reason: decision.reason });
    return { outcome: "skipped", detail: { reason: decision.reason } };
  }
  const kept = checkout.livemode
    ? await keptPaymentsFor(db, ids.programId, checkout.subscriptionId, checkout.providerCustomerId)
    : [];
  if (decision.outcome === "not_attributed") {
    // This subscription's kept invoices have nothing left to wait for.
    for (const k of kept) {
      if (k.payment.subscriptionId === checkout.subscriptionId) {
        await resolveKeptPayment(db, k.eventId, "not_attributed", now);
      }
    }
    log("info", "subscription checkout not attributed", { ...fields, reason: decision.reason });
    return { outcome: "not_attributed", detail: { reason: decision.reason } };
  }

  const payments: Array<Record<string, unknown>> = [];
  for (const k of kept) {
    const processed = await processPayment(
      db,
      { eventId: k.eventId, programId: ids.programId },
      k.payment,
      now,
      { keep: false },
    );
    await resolveKeptPayment(db, k.eventId, processed.outcome, now);
    payments.push({ event_id: k.eventId, outcome: processed.outcome, ...processed.detail });
  }
  log("info", "subscription checkout bound the buyer", {
    ...fields,
    customer_id: bound.customerId,
    attributed_by: decision.attributedBy,
    kept_payments: payments.length,
  });
  return {
    outcome: "customer_bound",
    detail: {
      customer_id: bound.customerId,
      attributed_by: decision.attributedBy,
      ...(payments.length > 0 ? { kept_payments: payments } : {}),
    },
  };
}
