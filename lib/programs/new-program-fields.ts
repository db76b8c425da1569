import { z } from "@hono/zod-openapi";

/**
 * The fields of a new program, as `POST /api/v1/programs` and the command line's `init` take them. The
 * schema accepts any shape: the program rules (`checkNewProgram`) judge them, with the spec's exact messages.
 */
export const newProgramFields = {
  name: z.unknown().optional().openapi({ type: "string" }),
  domain: z.unknown().optional().openapi({ type: "string", example: "shop.example.com" }),
  commission_type: z
    .unknown()
    .optional()
    .openapi({ type: "string", enum: ["percent", "fixed", "recurring_percent", "recurring_fixed"] }),
  commission_rate: z
    .unknown()
    .optional()
    .openapi({ type: "number", description: "At most 100 for percent types" }),
  duration_months: z.unknown().optional().openapi({ type: "integer", description: "0 = lifetime (default)" }),
  cookie_duration: z
    .unknown()
    .optional()
    .openapi({ type: "integer", description: "Attribution window, 1 to 365 days (default 60)" }),
};
