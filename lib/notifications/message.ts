import { z } from "zod";

/**
 * A notification travelling on the queue. `dedupe_key` names the event it reports (e.g. the commission
 * transition), so a redelivered or re-sent message writes one row at most.
 */
export const NotificationMessageSchema = z.object({
  recipient_type: z.enum(["partner", "advertiser"]),
  // The columns are PostgreSQL integers: a larger id could never be written.
  recipient_id: z.number().int().positive().max(2_147_483_647),
  program_id: z.number().int().positive().max(2_147_483_647).nullable(),
  kind: z.string().min(1),
  payload: z.record(z.string(), z.unknown()),
  dedupe_key: z.string().min(1).max(300),
});

export type NotificationMessage = z.infer<typeof NotificationMessageSchema>;
