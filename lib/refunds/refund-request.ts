import { z } from "@hono/zod-openapi";

/**
 * The refund body. Validated inside the handler, after the key is read: a test API key answers before
 * the body is checked (spec), so the body cannot be validated at the route boundary.
 */
export const RefundRequestSchema = z
  .object(
    {
      transaction_id: z
        .string({ error: "transaction_id is required" })
        .trim()
        .min(1, { error: "transaction_id is required" })
        .openapi({ description: "The transaction_id of the original sale.", example: "pi_3PqX" }),
      refund_amount_cents: z
        .number({ error: "refund_amount_cents must be a positive integer" })
        .int({ error: "refund_amount_cents must be a positive integer" })
        .nonnegative({ error: "refund_amount_cents must be a positive integer" })
        .max(Number.MAX_SAFE_INTEGER, { error: "refund_amount_cents must be a positive integer" })
        .nullish()
        .openapi({
          description: "This refund's amount (not a running total). Omitted or 0: everything left.",
        }),
      refund_id: z
        .string({ error: "refund_id must be a string" })
        .trim()
        .max(255, { error: "refund_id must be at most 255 characters" })
        .nullish()
        .openapi({
          description:
            "Your id for this refund; a repeated refund_id is skipped. Blank: no id (keyed by its amount).",
        }),
      refund_reason: z
        .string({ error: "refund_reason must be a string" })
        .max(1000, { error: "refund_reason must be at most 1000 characters" })
        .nullish(),
      reason: z
        .enum(["refund", "chargeback"], { error: "reason must be refund or chargeback" })
        .nullish()
        .openapi({ description: "`refund` (default) or `chargeback`." }),
      additional_data: z
        .looseObject(
          {
            test_mode: z.boolean({ error: "additional_data.test_mode must be a boolean" }).nullish().openapi({
              description: "A test refund: answered `{success: true, test: true}`, nothing refunded.",
            }),
          },
          { error: "additional_data must be an object" },
        )
        .nullish(),
    },
    { error: "transaction_id is required" },
  )
  .openapi("RefundRequest");

export type RefundRequest = z.infer<typeof RefundRequestSchema>;

export const RefundResponseSchema = z
  .union([
    z.object({
      success: z.literal(true),
      status: z.enum(["reversed", "refunded"]),
      deductionAmount: z
        .number()
        .int()
        .openapi({
          description:
            "Minor units of the commission's currency (e.g. cents): this refund's share of the commission, taken " +
            "from the partner's balance only when the commission was credited (a pending one's is informational).",
        }),
      commission_id: z.number().int(),
    }),
    z.object({ success: z.literal(true), status: z.literal("no_commission"), message: z.string() }),
    z.object({
      success: z.literal(true),
      status: z.literal("skipped"),
      reason: z.string(),
      commission_id: z.number().int().nullable(),
    }),
    z.object({ success: z.literal(true), test: z.literal(true) }),
  ])
  .openapi("RefundResponse");
