import type { NotificationMessage } from "../notifications/message.ts";

/**
 * After a commission transition: an in-app notification to the partner, and a manual-review warning to
 * the advertiser when the commission had been paid out. Deduped by the refund that caused it.
 */
export function refundNotifications(input: {
  refundRowId: number;
  programId: number;
  partnerId: number;
  advertiserId: number;
  commissionId: number;
  status: "refunded" | "reversed";
  deductionCents: number;
  currency: string;
  reason: string;
  paidOut: boolean;
}): NotificationMessage[] {
  const payload = {
    commission_id: input.commissionId,
    status: input.status,
    deduction_cents: input.deductionCents,
    currency: input.currency,
    reason: input.reason,
  };
  const messages: NotificationMessage[] = [
    {
      recipient_type: "partner",
      recipient_id: input.partnerId,
      program_id: input.programId,
      kind: `commission_${input.status}`,
      payload,
      dedupe_key: `refund:${input.refundRowId}:partner`,
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
        action: "Review this paid-out commission manually.",
      },
      dedupe_key: `refund:${input.refundRowId}:advertiser`,
    });
  }
  return messages;
}
