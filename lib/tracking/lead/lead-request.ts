import { z } from "@hono/zod-openapi";
import { isPlausibleEmail } from "../email.ts";

// Any positive integer: one beyond the database's integer ids names no program, and the route compares it
// as such (`comparableProgramId`): with a key the top-level one is not read, and a test event's gives 403.
const programIdField = (name: string) =>
  z
    .number({ error: `${name} must be a positive integer` })
    .int({ error: `${name} must be a positive integer` })
    .positive({ error: `${name} must be a positive integer` });

/**
 * Field order is check order: the first failing field's message is the answer. The rules between fields
 * (click_id or customer_key, click_id without a key) depend on the Authorization header and live in
 * `decide-lead.ts`, so a body missing both still parses here.
 */
export const LeadRequestSchema = z
  .object(
    {
      click_id: z
        .string({ error: "click_id must be a string" })
        .max(128, { error: "click_id must be at most 128 characters" })
        .nullish()
        .openapi({
          description:
            "The visitor's `service_click_id` cookie. The customer is found through the click. Required " +
            "without an API key; outside test mode, `click_id` or `customer_key` is required.",
          example: "clk_3q2Vb0cJ8m1o6tYkT9rX4w",
        }),
      customer_key: z
        .string({ error: "customer_key must be a string" })
        .max(255, { error: "customer_key must be at most 255 characters" })
        .nullish()
        .openapi({
          description:
            "The brand's own customer or user id. Saved on the customer only when the lead settles; with an " +
            "API key it finds a customer whose lead already settled.",
          example: "user_8412",
        }),
      email: z
        .string({ error: "email must be a valid email address" })
        .refine((value) => value.trim() === "" || isPlausibleEmail(value), {
          error: "email must be a valid email address",
        })
        .nullish()
        .openapi({
          description:
            "The customer's email. Stored only as a SHA-256 hash of the trimmed lower-case address and a " +
            "masked form (`j***@example.com`), to match later payments by email.",
          example: "jane@example.com",
        }),
      program_id: programIdField("program_id")
        .nullish()
        .openapi({
          description:
            "The program of the page (the tracker sends it). Read only without an API key: the click must " +
            "belong to it, otherwise 400 Customer not found.",
          example: 1,
        }),
      additional_data: z
        .looseObject(
          {
            test_mode: z
              .boolean({ error: "additional_data.test_mode must be a boolean" })
              .nullish()
              .openapi({ description: "Record a flagged test lead that touches no customer." }),
            program_id: programIdField("additional_data.program_id").nullish().openapi({
              description:
                "The program of a test event; with a Bearer key it must be the key's program (else 403).",
            }),
            event_name: z
              .string({ error: "additional_data.event_name must be a string" })
              .max(100, { error: "additional_data.event_name must be at most 100 characters" })
              .nullish()
              .openapi({ description: "A label stored with the lead, e.g. `signup`.", example: "signup" }),
          },
          { error: "additional_data must be an object" },
        )
        .nullish(),
    },
    { error: "click_id or customer_key is required" },
  )
  .openapi("LeadRequest");

export type LeadRequest = z.infer<typeof LeadRequestSchema>;

export const LeadSettledResponseSchema = z
  .object({ success: z.literal(true), message: z.string() })
  .openapi("LeadSettledResponse", { example: { success: true, message: "Lead recorded" } });

export const LeadProvisionalResponseSchema = z
  .object({ success: z.literal(true), provisional: z.literal(true), message: z.string() })
  .openapi("LeadProvisionalResponse");

export const LeadTestResponseSchema = z
  .object({
    success: z.literal(true),
    message: z.string(),
    data: z.object({
      eventId: z.number().int().openapi({ description: "The id of the stored test lead event." }),
      programId: z.number().int(),
      test_mode: z.literal(true),
    }),
  })
  .openapi("LeadTestResponse");

export const LeadResponseSchema = z
  .union([LeadTestResponseSchema, LeadProvisionalResponseSchema, LeadSettledResponseSchema])
  .openapi("LeadResponse");

export type LeadResponse = z.infer<typeof LeadResponseSchema>;
