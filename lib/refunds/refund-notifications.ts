import type { NotificationMessage } from "../notifications/message.ts";

/**
 * An in-app notification of a refund's commission transition, written with the refund in its transaction
 * (`insert_refund_notifications`), which dedupes it by the refund row it inserts and the recipient:
 * `refund:<refund row id>:<recipient_type>`.
 */
export type RefundNotification = Omit<NotificationMessage, "dedupe_key">;

/** What the advertiser's notification of a paid-out commission's refund asks. */
export const PAID_OUT_REVIEW_ACTION = "Review this paid-out commission manually.";

/**
 * After a commission transition: an in-app notification to the partner, and a manual-review warning to
 * the advertiser when the commission had been paid out.
 */
export function refundNotifications(input: {
  programId: number;
  partnerId: number;
  advertiserId: number;
  commissionId: number;
  status: "refunded" | "reversed";
  deductionCents: number;
  currency: string;
  reason: string;
  paidOut: boolean;
}): RefundNotification[] {
  const payload = {
    commission_id: input.commissionId,
    status: input.status,
    deduction_cents: input.deductionCents,
    currency: input.currency,
    reason: input.reason,
  };
  const messages: RefundNotification[] = [
    {
      recipient_type: "partner",
      recipient_id: input.partnerId,
      program_id: input.programId,
      kind: `commission_${input.status}`,
      payload,
    },
  ];
  if (input.paidOut) {
    messages.push({
      recipient_type: "advertiser",
      recipient_id: input.advertiserId,
      program_id: input.programId,
      kind: "paid_commission_reversed_review",
      payload: {
        ...payload,
        partner_id: input.partnerId,
        action: PAID_OUT_REVIEW_ACTION,
      },
    });
  }
  return messages;
}
