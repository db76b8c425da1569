import { z } from "@hono/zod-openapi";

const maxUrlLength = 2048;

function isHttpUrl(value: string): boolean {
  if (value.length > maxUrlLength) return false;
  try {
    const url = new URL(value);
    return (url.protocol === "http:" || url.protocol === "https:") && url.hostname !== "";
  } catch {
    return false;
  }
}

const absent = (input: unknown) => input === undefined || input === null;

/** Field order is check order: the first failing field's message is the answer. */
export const VisitRequestSchema = z
  .object(
    {
      click_id: z
        .string({
          error: (issue) => (absent(issue.input) ? "click_id is required" : "click_id must be a string"),
        })
        .max(128, { error: "click_id must be at most 128 characters" })
        .refine((value) => value.trim() !== "", { error: "click_id is required" })
        .openapi({
          description: "The visitor's `service_click_id` cookie.",
          example: "clk_3q2Vb0cJ8m1o6tYkT9rX4w",
        }),
      url: z
        .string({ error: (issue) => (absent(issue.input) ? "url is required" : "Invalid url") })
        .superRefine((value, ctx) => {
          if (value.trim() === "") ctx.addIssue({ code: "custom", message: "url is required" });
          else if (!isHttpUrl(value.trim())) ctx.addIssue({ code: "custom", message: "Invalid url" });
        })
        .openapi({
          description: "The page viewed: an absolute http(s) URL of at most 2048 characters.",
          example: "https://brand.example/pricing",
        }),
      referrer: z
        .string({ error: "referrer must be a string" })
        .max(maxUrlLength, { error: `referrer must be at most ${maxUrlLength} characters` })
        .nullish()
        .openapi({ description: "The page's `document.referrer`, stored for reporting." }),
      program_id: z
        .number({ error: "program_id must be a positive integer" })
        .int({ error: "program_id must be a positive integer" })
        .positive({ error: "program_id must be a positive integer" })
        .nullish()
        .openapi({
          description:
            "The program of the page (the tracker sends it). When sent, the click must belong to it.",
          example: 1,
        }),
      additional_data: z
        .looseObject(
          {
            test_mode: z
              .boolean({ error: "additional_data.test_mode must be a boolean" })
              .nullish()
              .openapi({ description: "Record a flagged test visit." }),
          },
          { error: "additional_data must be an object" },
        )
        .nullish(),
    },
    { error: "click_id is required" },
  )
  .openapi("VisitRequest");

export type VisitRequest = z.infer<typeof VisitRequestSchema>;

export const VisitResponseSchema = z.object({ success: z.literal(true) }).openapi("VisitResponse");
