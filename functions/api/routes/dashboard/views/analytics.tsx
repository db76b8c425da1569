import type { AnalyticsReport } from "../../../../../lib/analytics/build-report.ts";
import { type PageDimension, pageDimensions } from "../../../../../lib/dashboard/page/load-program-page.ts";
import { formatRate, moneyLine } from "./format.ts";

const dimensionLabel: Record<PageDimension, string> = {
  partner: "Partner",
  link: "Referral link",
  referrer_domain: "Referrer domain",
  utm_source: "UTM source",
  utm_medium: "UTM medium",
  utm_campaign: "UTM campaign",
  landing_page: "Landing page",
};

/** Analytics by source over the last 30 days, grouped as the person chooses (a GET form). */
export function Analytics(props: { programId: number; report: AnalyticsReport; groupBy: PageDimension }) {
  const r = props.report;
  return (
    <section class="card" aria-labelledby="analytics-title" id="analytics">
      <h2 id="analytics-title">Analytics by source, last 30 days</h2>
      <form method="get" action="/dashboard#analytics" class="inline">
        <input type="hidden" name="program" value={String(props.programId)} />
        <label for="group_by">Group by</label>
        <select id="group_by" name="group_by">
          {pageDimensions.map((d) => (
            <option value={d} selected={d === props.groupBy}>
              {dimensionLabel[d]}
            </option>
          ))}
        </select>
        <button type="submit">Show</button>
      </form>
      {r.rows.length === 0 ? (
        <p class="empty">No live events in this range yet.</p>
      ) : (
        <div class="scroll">
          <table id="analytics-table">
            <thead>
              <tr>
                <th scope="col">{dimensionLabel[props.groupBy]}</th>
                <th scope="col">Clicks</th>
                <th scope="col">Leads</th>
                <th scope="col">Sales</th>
                <th scope="col">Lead rate</th>
                <th scope="col">Sale rate</th>
                <th scope="col">Net revenue</th>
              </tr>
            </thead>
            <tbody>
              {r.rows.map((row) => (
                <tr>
                  <th scope="row">{row.source}</th>
                  <td>{row.clicks}</td>
                  <td>{row.leads}</td>
                  <td>{row.sales}</td>
                  <td>{formatRate(row.lead_conversion_rate)}</td>
                  <td>{formatRate(row.sale_conversion_rate)}</td>
                  <td>{moneyLine(row.money)}</td>
                </tr>
              ))}
              {r.other ? (
                <tr>
                  <th scope="row">{r.other.sources} other sources</th>
                  <td>{r.other.clicks}</td>
                  <td>{r.other.leads}</td>
                  <td>{r.other.sales}</td>
                  <td>{formatRate(r.other.lead_conversion_rate)}</td>
                  <td>{formatRate(r.other.sale_conversion_rate)}</td>
                  <td>{moneyLine(r.other.money)}</td>
                </tr>
              ) : null}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}
