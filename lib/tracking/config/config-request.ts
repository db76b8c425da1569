import { z } from "@hono/zod-openapi";
import { leadAuthPolicies } from "../../../schema/programs.ts";

/** `?program_id=`: digits only, a positive 32-bit integer (a larger one names no program). */
export const ConfigQuerySchema = z
  .object(
    {
      program_id: z
        .string({ error: "program_id is required" })
        .superRefine((value, ctx) => {
          if (value.trim() === "") ctx.addIssue({ code: "custom", message: "program_id is required" });
          else if (!/^[1-9]\d{0,9}$/.test(value.trim()))
            ctx.addIssue({ code: "custom", message: "program_id must be a positive integer" });
        })
        .openapi({
          param: { name: "program_id", in: "query", required: true },
          description: "The program whose tracker settings to read (the script tag's `data-program-id`).",
          example: "1",
        }),
    },
    { error: "program_id is required" },
  )
  .openapi("ConfigQuery");

export const ConfigResponseSchema = z
  .object({
    success: z.literal(true),
    program_id: z.number().int(),
    cookie_window_days: z
      .number()
      .int()
      .openapi({ description: "The program's attribution window: the lifetime of the click cookie." }),
    lead_capture_mode: z.enum(leadAuthPolicies).openapi({
      description:
        "The program's lead auth policy: `server_required` (a browser lead is provisional) or " +
        "`browser_allowed` (a browser lead settles).",
    }),
    origin_allowed: z.boolean().openapi({
      description:
        "Whether the request's `Origin` is in the program's allowed origins, i.e. whether the tracker on " +
        "that page may read the click, visit and lead answers. False without an `Origin` header.",
    }),
  })
  .openapi("TrackerConfig");

export type TrackerConfig = z.infer<typeof ConfigResponseSchema>;
