import { z } from "@hono/zod-openapi";

/** Request and response shapes of `/api/v1/cli/*` (the spec leaves the bodies to us; README documents them). */
const ok = <T extends z.ZodRawShape>(name: string, data: T) =>
  z.object({ success: z.literal(true), data: z.object(data) }).openapi(name);

export const AuthStartResponseSchema = ok("CliAuthStartResponse", {
  state: z.string().openapi({ description: "Poll `auth/poll?state=` with it; keep it secret." }),
  user_code: z
    .string()
    .openapi({ description: "Shown by the tool and by the sign-in page", example: "BCDF-GHJK" }),
  verification_url: z
    .string()
    .openapi({ description: "The sign-in page to open; it carries a secret of its own, not the state" }),
  poll_interval_seconds: z.number().int(),
  expires_at: z.string().openapi({ description: "ISO 8601; 5 minutes after the start" }),
});

export const PollQuerySchema = z
  .object(
    {
      state: z
        .string({ error: "Missing state parameter" })
        .min(1, "Missing state parameter")
        .openapi({ param: { name: "state", in: "query", required: true } }),
    },
    { error: "Missing state parameter" },
  )
  .openapi("CliPollQuery");

export const PollResponseSchema = z
  .object({
    success: z.literal(true),
    data: z.union([
      z.object({ status: z.enum(["pending", "expired"]) }),
      z.object({
        status: z.literal("complete"),
        token: z.string().openapi({ description: "The login token, handed out this once" }),
        expires_at: z.string(),
        email: z.string(),
      }),
    ]),
  })
  .openapi("CliPollResponse");

export const LogoutResponseSchema = ok("CliLogoutResponse", { logged_out: z.literal(true) });

const StepStatusSchema = z.object({ live: z.boolean(), test: z.boolean(), last_at: z.string().nullable() });

export const StatusResponseSchema = ok("CliStatusResponse", {
  program: z.object({ id: z.number().int(), name: z.string(), domain: z.string() }),
  key_mode: z.enum(["live", "test"]),
  verified: z.boolean(),
  steps: z.object({ click: StepStatusSchema, lead: StepStatusSchema, sale: StepStatusSchema }),
  next_step: z.string().nullable(),
});

// A JSON body that is not an object (`null`, `[]`) names no event_type, as an empty object does.
export const TestEventRequestSchema = z
  .object(
    {
      event_type: z
        .unknown()
        .optional()
        .openapi({ description: "`click`, `lead` or `sale`", example: "click" }),
      type: z.unknown().optional().openapi({ description: "`chain`: the full click -> lead -> sale chain" }),
    },
    { error: "Invalid event_type: undefined. Valid: click, lead, sale" },
  )
  .openapi("CliTestEventRequest");

const StepReportSchema = z.object({
  step: z.enum(["click", "lead", "sale"]),
  ok: z.boolean(),
  status: z.number().int().openapi({ description: "The tracking endpoint's HTTP status for this step" }),
  id: z.union([z.string(), z.number().int()]).nullable(),
  message: z.string().nullable(),
});

export const TestEventResponseSchema = z
  .object({
    success: z.literal(true),
    data: z.union([
      z.object({
        type: z.literal("event"),
        program_id: z.number().int(),
        test_mode: z.literal(true),
        step: StepReportSchema,
      }),
      z.object({
        type: z.literal("chain"),
        program_id: z.number().int(),
        test_mode: z.literal(true),
        ok: z.boolean(),
        steps: z.array(StepReportSchema),
      }),
    ]),
  })
  .openapi("CliTestEventResponse");
