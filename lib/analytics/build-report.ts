import type { AnalyticsQuery } from "./analytics-request.ts";
import type { MeasureValues, SourceRow, SourcesRead } from "./analytics-store.ts";
import { measureColumns } from "./event-facts.ts";

export interface MoneyFigures {
  sales: number;
  revenue_cents: number;
  refunds: number;
  refunded_cents: number;
  net_revenue_cents: number;
  commission_cents: number;
  /** Commission per click, in minor units of this currency (null without clicks). */
  earnings_per_click_cents: number | null;
}

export interface SourceFigures {
  clicks: number;
  leads: number;
  provisional_leads: number;
  sales: number;
  /** leads / clicks, and sales (every currency) / clicks; null without clicks. */
  lead_conversion_rate: number | null;
  sale_conversion_rate: number | null;
  /** Money per currency (never converted), in minor units. */
  money: Record<string, MoneyFigures>;
}

export interface SourceEntry extends SourceFigures {
  source: string;
  value: string | null;
  label: string | null;
}

export interface AnalyticsReport {
  program_id: number;
  group_by: string;
  timezone: string;
  interval: string | null;
  start: string;
  end: string;
  sources_total: number;
  rows: SourceEntry[];
  other: (SourceFigures & { sources: number }) | null;
  totals: SourceFigures;
}

export const directLabel = "(direct)";

const zero = (): MeasureValues => Object.fromEntries(measureColumns.map((m) => [m, 0])) as MeasureValues;

const rate = (n: number, d: number) => (d > 0 ? Math.round((n / d) * 10_000) / 10_000 : null);

function figures(rows: readonly SourceRow[]): SourceFigures {
  const all = zero();
  const perCurrency = new Map<string, MeasureValues>();
  for (const row of rows) {
    for (const m of measureColumns) all[m] += row.measures[m];
    if (row.currency === "") continue;
    const c = perCurrency.get(row.currency) ?? zero();
    for (const m of measureColumns) c[m] += row.measures[m];
    perCurrency.set(row.currency, c);
  }
  const money: Record<string, MoneyFigures> = {};
  for (const currency of [...perCurrency.keys()].sort()) {
    const c = perCurrency.get(currency) as MeasureValues;
    money[currency] = {
      sales: c.sales,
      revenue_cents: c.revenue_cents,
      refunds: c.refunds,
      refunded_cents: c.refunded_cents,
      net_revenue_cents: c.revenue_cents - c.refunded_cents,
      commission_cents: c.commission_cents,
      earnings_per_click_cents:
        all.clicks > 0 ? Math.round((c.commission_cents / all.clicks) * 100) / 100 : null,
    };
  }
  return {
    clicks: all.clicks,
    leads: all.leads,
    provisional_leads: all.provisional_leads,
    sales: all.sales,
    lead_conversion_rate: rate(all.leads, all.clicks),
    sale_conversion_rate: rate(all.sales, all.clicks),
    money,
  };
}

/** Turns the per-source, per-currency sums into the response: rows in rank order, the rest, the totals. */
export function buildReport(programId: number, query: AnalyticsQuery, read: SourcesRead): AnalyticsReport {
  const byValue = new Map<string | null, SourceRow[]>();
  for (const row of read.rows) byValue.set(row.value, [...(byValue.get(row.value) ?? []), row]);
  const rows: SourceEntry[] = [];
  for (const [value, group] of byValue) {
    if (value === null) continue;
    rows.push({
      source: value === "" ? directLabel : (group[0]?.label ?? value),
      value: value === "" ? null : value,
      label: group[0]?.label ?? null,
      ...figures(group),
    });
  }
  const rest = byValue.get(null);
  return {
    program_id: programId,
    group_by: query.dimension,
    timezone: query.timeZone,
    interval: query.interval,
    start: query.from.toISOString(),
    end: query.to.toISOString(),
    sources_total: read.sources,
    rows,
    other: rest ? { sources: read.otherSources, ...figures(rest) } : null,
    totals: figures(read.rows),
  };
}
