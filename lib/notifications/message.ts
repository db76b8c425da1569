import { z } from "zod";

/**
 * A notification travelling on the queue. `dedupe_key` names the event it reports (e.g. the commission
 * transition), so a redelivered or re-sent message writes one row at most.
 */
export const NotificationMessageSchema = z.object({
  recipient_type: z.enum(["partner", "advertiser"]),
  recipient_id: z.number().int().positive(),
  program_id: z.number().int().positive().nullable(),
  kind: z.string().min(1),
  payload: z.record(z.string(), z.unknown()),
  dedupe_key: z.string().min(1).max(300),
});

export type NotificationMessage = z.infer<typeof NotificationMessageSchema>;
