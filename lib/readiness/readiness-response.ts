import { z } from "@hono/zod-openapi";
import { readinessStages } from "./decide-readiness.ts";

const CheckSchema = z.object({
  id: z.string().openapi({
    description:
      "Stable id: api_key, referral_link, allowed_origins, clicks_received, click_origin, leads_settled, " +
      "sale_with_commission, test_event, sales_path, refunds_received.",
  }),
  stage: z.enum(readinessStages),
  title: z.string(),
  required: z.boolean(),
  status: z.enum(["pass", "warn", "fail"]),
  message: z.string(),
  evidence: z.record(z.string(), z.unknown()).openapi({
    description: "What was recorded: counts (of the newest events, capped), last event times, origins seen.",
  }),
  hint: z.string(),
  docs_url: z.string(),
  cli: z.string().nullable().openapi({ description: "The command-line command that tests this check." }),
});

export const ReadinessResponseSchema = z
  .object({
    program_id: z.number().int(),
    verdict: z.enum(["ready", "almost_ready", "not_ready"]).openapi({
      description: "`not_ready`: a check fails; `almost_ready`: none fails, some warn; `ready`: all pass.",
    }),
    summary: z.string(),
    counts: z.object({
      pass: z.number().int(),
      warn: z.number().int(),
      fail: z.number().int(),
      required: z.number().int(),
      required_passing: z.number().int(),
    }),
    next_step: z.object({ check: z.string(), hint: z.string() }).nullable(),
    checked_at: z.string(),
    evidence_sample_size: z.number().int(),
    checks: z.array(CheckSchema),
    fraud: z
      .object({
        flagged: z.object({
          leads: z.number().int(),
          sales: z.number().int(),
          commissions: z.number().int(),
        }),
        codes: z.array(z.string()).openapi({ description: "Signal codes seen on those rows, sorted" }),
        hold_flagged_commissions: z.boolean(),
        hold_days: z.number().int().openapi({
          description: "The program's hold period in days; with 0 no flagged commission is held",
        }),
        email_attribution_settled_leads_only: z.boolean(),
        message: z.string(),
      })
      .openapi({
        description:
          "Informational, never a check: live leads, sales and commissions with fraud flags among the newest " +
          "`evidence_sample_size` of each kind, the codes seen, and the program's fraud settings.",
      }),
  })
  .openapi("ReadinessVerdict");
