import { z } from "@hono/zod-openapi";
import { occurredAtMessage, requiredAmount, requiredTransactionId } from "./sale-messages.ts";

export const saleProviders = [
  "stripe",
  "paddle",
  "paypal",
  "braintree",
  "adyen",
  "square",
  "chargebee",
  "recurly",
  "lemonsqueezy",
  "razorpay",
  "other",
] as const;

/** ISO 8601 date-time with an explicit offset (`Z` or `+hh:mm`). */
const isoWithOffset = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})$/;

const stringField = (name: string, max = 255) =>
  z
    .string({ error: `${name} must be a string` })
    .max(max, { error: `${name} must be a string of at most ${max} characters` });

/**
 * Shapes and messages of the sale body. `transaction_id` and `amount_cents` are declared optional here
 * because test mode may omit them (null counts as omitted, as for every optional field); `decideSale`
 * enforces them outside test mode with the same messages.
 * Time rules (`occurred_at` age) need the clock and live in `decideSale` too.
 */
export const SaleRequestSchema = z
  .object(
    {
      transaction_id: z
        .string({ error: requiredTransactionId })
        .trim()
        .min(1, { error: requiredTransactionId })
        .max(255, { error: "transaction_id must be at most 255 characters" })
        .nullish()
        .openapi({
          description: "Unique payment id; duplicate detection across the service.",
          example: "pi_3PqX",
        }),
      amount_cents: z
        .number({ error: requiredAmount })
        .int({ error: requiredAmount })
        .positive({ error: requiredAmount })
        .max(Number.MAX_SAFE_INTEGER, { error: requiredAmount })
        .nullish()
        .openapi({ description: "Positive integer in the currency's smallest unit.", example: 4900 }),
      tax_cents: z
        .number({ error: "tax_cents must be a non-negative integer" })
        .int({ error: "tax_cents must be a non-negative integer" })
        .nonnegative({ error: "tax_cents must be a non-negative integer" })
        .max(Number.MAX_SAFE_INTEGER, { error: "tax_cents must be a non-negative integer" })
        .nullish()
        .openapi({ description: "Tax included in amount_cents; stored, unused for commissions." }),
      customer_key: stringField("customer_key").nullish(),
      click_id: stringField("click_id", 128).nullish(),
      currency: z
        .string({ error: "currency must be a string" })
        .nullish()
        .openapi({ description: "USD, EUR or VND; default USD. Not converted.", example: "USD" }),
      sale_type: z
        .enum(["payment", "subscription"], { error: "sale_type must be one of: payment, subscription" })
        .nullish(),
      line_items: z
        .union([z.record(z.string(), z.unknown()), z.array(z.unknown())], {
          error: "line_items must be an object",
        })
        .nullish()
        .openapi({ description: "Arbitrary detail stored with the sale." }),
      is_recurring: z.boolean({ error: "is_recurring must be a boolean" }).nullish(),
      subscription_id: stringField("subscription_id").nullish(),
      subscription_interval: z
        .enum(["monthly", "quarterly", "annual"], {
          error: "subscription_interval must be one of: monthly, quarterly, annual",
        })
        .nullish(),
      product_id: stringField("product_id")
        .nullish()
        .openapi({ description: "Matches per-product commission rules." }),
      occurred_at: z
        .string({ error: occurredAtMessage })
        .regex(isoWithOffset, { error: occurredAtMessage })
        .refine((value) => !Number.isNaN(Date.parse(value)), { error: occurredAtMessage })
        .nullish()
        .openapi({
          description: "ISO 8601 with offset; at most 30 days old, 5 minutes ahead. Reporting only.",
        }),
      provider: z
        .enum(saleProviders, { error: `provider must be one of: ${saleProviders.join(", ")}` })
        .nullish(),
      provider_payment_id: z
        .string({ error: "provider_payment_id must be a string of 1 to 255 characters" })
        .min(1, { error: "provider_payment_id must be a string of 1 to 255 characters" })
        .max(255, { error: "provider_payment_id must be a string of 1 to 255 characters" })
        .nullish(),
      livemode: z.boolean({ error: "livemode must be a boolean" }).nullish(),
      additional_data: z
        .looseObject(
          { test_mode: z.boolean({ error: "additional_data.test_mode must be a boolean" }).nullish() },
          { error: "additional_data must be an object" },
        )
        .nullish(),
    },
    { error: requiredTransactionId },
  )
  .openapi("SaleRequest");

export type SaleRequest = z.infer<typeof SaleRequestSchema>;

export const SaleResponseSchema = z
  .object({
    success: z.literal(true),
    sale_id: z.number().int().nullable(),
    commission_id: z.number().int().nullable(),
    message: z.string(),
  })
  .openapi("SaleResponse");

export const TestEventResponseSchema = z
  .object({
    success: z.literal(true),
    message: z.string(),
    data: z.object({ eventId: z.number().int(), programId: z.number().int(), test_mode: z.literal(true) }),
  })
  .openapi("TestEventResponse");
