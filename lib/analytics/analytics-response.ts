import { z } from "@hono/zod-openapi";

export const Money = z.object({
  sales: z.number().int(),
  revenue_cents: z.number().int(),
  refunds: z.number().int(),
  refunded_cents: z.number().int(),
  net_revenue_cents: z.number().int(),
  commission_cents: z
    .number()
    .int()
    .openapi({ description: "Commissions created, before refund reductions." }),
  earnings_per_click_cents: z.number().nullable(),
});

export const Figures = {
  clicks: z.number().int(),
  leads: z
    .number()
    .int()
    .openapi({ description: "Leads settled on arrival (server-mode, or browser-allowed)." }),
  provisional_leads: z
    .number()
    .int()
    .openapi({ description: "Browser leads stored provisional; shown apart." }),
  sales: z.number().int(),
  lead_conversion_rate: z.number().nullable(),
  sale_conversion_rate: z.number().nullable(),
  money: z
    .record(z.string(), Money)
    .openapi({ description: "Per currency, in minor units, never converted." }),
};

export const AnalyticsResponseSchema = z
  .object({
    data: z.object({
      program_id: z.number().int(),
      group_by: z.string(),
      timezone: z.string(),
      interval: z.string().nullable(),
      start: z.string(),
      end: z.string(),
      sources_total: z.number().int(),
      rows: z.array(
        z.object({
          source: z
            .string()
            .openapi({ description: "Display name; `(direct)` for events without this source." }),
          value: z.string().nullable(),
          label: z.string().nullable(),
          ...Figures,
        }),
      ),
      other: z.object({ sources: z.number().int(), ...Figures }).nullable(),
      totals: z.object(Figures),
    }),
  })
  .openapi("AnalyticsSources");
