import { z } from "@hono/zod-openapi";
import { Figures, Money } from "../analytics/analytics-response.ts";
import { maxCheckedEvents } from "./dashboard-test-events.ts";
import { eventKinds } from "./events-query.ts";

/** Request and response shapes of `/api/tracking/*` (the spec leaves them to us; README documents them). */
const ok = <T extends z.ZodRawShape>(name: string, data: T) =>
  z.object({ success: z.literal(true), data: z.object(data) }).openapi(name);

// Any integer a JSON number holds exactly is a well-formed id; one beyond the `integer` ids names no program
// and is refused as any other program's id is (403, `requireProgramAccess`), not as malformed.
const maxId = Number.MAX_SAFE_INTEGER;
export const programIdMessage = "programId must be a positive integer";
export const bodyProgramIdMessage = "program_id is required and must be a positive integer";
export const eventTypeMessage = "event_type must be one of: click, lead, sale";
export const eventsMessage = `events must be a list of 1 to ${maxCheckedEvents} test events, each {kind, id} as the test route returned it`;

export const ProgramPathSchema = z.object({
  programId: z
    .string()
    .regex(/^[1-9][0-9]{0,15}$/, programIdMessage)
    .refine((v) => Number(v) <= maxId, programIdMessage)
    .openapi({ param: { name: "programId", in: "path", required: true }, example: "42" }),
});

const BodyProgramId = z
  .number({ error: bodyProgramIdMessage })
  .int({ error: bodyProgramIdMessage })
  .min(1, { error: bodyProgramIdMessage })
  .max(maxId, { error: bodyProgramIdMessage })
  .openapi({ description: "The program (its workspace must be yours)", example: 42 });

export const DashboardTestRequestSchema = z
  .object(
    {
      program_id: BodyProgramId,
      event_type: z
        .enum(["click", "lead", "sale"], { error: eventTypeMessage })
        .openapi({ description: "The kind of test event to record", example: "click" }),
    },
    { error: bodyProgramIdMessage },
  )
  .openapi("DashboardTestRequest");

const TestEventRefSchema = z
  .object(
    {
      kind: z.enum(["click", "lead", "sale"], { error: eventsMessage }),
      id: z.union(
        [
          z
            .string({ error: eventsMessage })
            .min(1, { error: eventsMessage })
            .max(64, { error: eventsMessage }),
          z
            .number({ error: eventsMessage })
            .int({ error: eventsMessage })
            .min(1, { error: eventsMessage })
            .max(Number.MAX_SAFE_INTEGER, { error: eventsMessage }),
        ],
        { error: eventsMessage },
      ),
    },
    { error: eventsMessage },
  )
  .refine((ref) => (ref.kind === "click") === (typeof ref.id === "string"), { error: eventsMessage })
  .openapi({ description: "A click by its `click_id` (string), a lead or sale by its event id (integer)" });

export const CheckTestEventsRequestSchema = z
  .object(
    {
      program_id: BodyProgramId,
      events: z
        .array(TestEventRefSchema, { error: eventsMessage })
        .min(1, { error: eventsMessage })
        .max(maxCheckedEvents, { error: eventsMessage }),
    },
    { error: bodyProgramIdMessage },
  )
  .openapi("CheckTestEventsRequest");

const StepStatusSchema = z.object({ live: z.boolean(), test: z.boolean(), last_at: z.string().nullable() });

export const DashboardStatusSchema = ok("DashboardStatus", {
  program: z.object({ id: z.number().int(), name: z.string(), domain: z.string() }),
  verified: z
    .boolean()
    .openapi({ description: "Click, lead and sale each seen at least once (live or test)" }),
  steps: z.object({ click: StepStatusSchema, lead: StepStatusSchema, sale: StepStatusSchema }),
  next_step: z.string().nullable(),
});

const FeedEventSchema = z.object({
  kind: z.enum(eventKinds),
  id: z.number().int().openapi({ description: "The row id within its kind" }),
  created_at: z.string(),
  test: z.boolean().openapi({ description: "A test event (test mode, test key or the verifier)" }),
  partner: z.object({ id: z.number().int(), name: z.string() }).nullable(),
  click_id: z.string().nullable().openapi({ description: "Click: its id; lead: the click it came through" }),
  link: z.string().nullable().openapi({ description: "Click: the referral link's code" }),
  landing_page: z.string().nullable(),
  customer_key: z.string().nullable().openapi({ description: "Lead: the brand's customer key" }),
  event_name: z.string().nullable(),
  provisional: z.boolean().nullable().openapi({ description: "Lead: stored provisional (browser mode)" }),
  amount_cents: z.number().int().nullable().openapi({ description: "Sale: amount; refund: amount applied" }),
  currency: z.string().nullable(),
  transaction_id: z.string().nullable().openapi({ description: "Sale, refund: the sale's transaction id" }),
  reason: z.string().nullable().openapi({ description: "Refund: `refund` or `chargeback`" }),
  fraud_flags: z.array(z.string()).openapi({
    description:
      "Lead, sale: the fraud signal codes stored on the row (never blocking); empty when none, and for clicks and refunds",
  }),
  commission_fraud_flags: z.array(z.string()).nullable().openapi({
    description: "Sale: its commission's fraud signal codes (empty when none); null for other kinds",
  }),
});

export const EventsPageSchema = ok("DashboardEvents", {
  program_id: z.number().int(),
  events: z.array(FeedEventSchema),
  next_cursor: z
    .string()
    .nullable()
    .openapi({ description: "Pass as `cursor` for the next page; null at the end" }),
});

const DayMoneySchema = Money.omit({ earnings_per_click_cents: true });

export const PerformanceSchema = ok("DashboardPerformance", {
  program_id: z.number().int(),
  timezone: z.string(),
  interval: z.string().nullable(),
  start: z.string(),
  end: z.string(),
  totals: z.object(Figures),
  series: z.array(
    z.object({
      date: z.string().openapi({ description: "Local date in `timezone`", example: "2026-11-01" }),
      clicks: z.number().int(),
      leads: z.number().int(),
      provisional_leads: z.number().int(),
      sales: z.number().int(),
      refunds: z.number().int(),
      money: z.record(z.string(), DayMoneySchema),
    }),
  ),
  partners: z.array(
    z.object({
      partner_id: z.number().int().nullable().openapi({ description: "Null for `(direct)`: no partner" }),
      name: z.string(),
      ...Figures,
    }),
  ),
  other_partners: z.object({ sources: z.number().int(), ...Figures }).nullable(),
});

const StepReportSchema = z.object({
  step: z.enum(["click", "lead", "sale"]),
  ok: z.boolean(),
  status: z.number().int().openapi({ description: "The tracking endpoint's HTTP status for this step" }),
  id: z.union([z.string(), z.number().int()]).nullable(),
  message: z.string().nullable(),
});

export const DashboardTestResponseSchema = ok("DashboardTestEvent", {
  program_id: z.number().int(),
  test_mode: z.literal(true),
  step: StepReportSchema,
  event: z
    .object({ kind: z.enum(["click", "lead", "sale"]), id: z.union([z.string(), z.number().int()]) })
    .nullable()
    .openapi({ description: "Send it to check-test-events; null when the step failed" }),
});

export const CheckTestEventsResponseSchema = ok("CheckTestEvents", {
  program_id: z.number().int(),
  all_landed: z.boolean(),
  events: z.array(
    z.object({
      kind: z.enum(["click", "lead", "sale"]),
      id: z.union([z.string(), z.number().int()]),
      landed: z.boolean(),
      recorded_at: z.string().nullable(),
    }),
  ),
});

export const VerificationResponseSchema = ok("DashboardVerification", {
  program_id: z.number().int(),
  test_mode: z.literal(true),
  ok: z.boolean().openapi({ description: "Every step answered 200" }),
  steps: z.array(StepReportSchema),
});
