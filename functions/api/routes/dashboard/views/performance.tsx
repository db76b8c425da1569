import type { PerformanceReport } from "../../../../../lib/dashboard/performance.ts";
import { formatMoney, moneyLine } from "./format.ts";

/** The chart's data for the script: dates and one count per day for each series drawn. */
export function chartData(report: PerformanceReport) {
  return {
    dates: report.series.map((p) => p.date),
    clicks: report.series.map((p) => p.clicks),
    leads: report.series.map((p) => p.leads),
    sales: report.series.map((p) => p.sales),
  };
}

/** Performance over the last 30 days: the chart (drawn by the script from `data-series`) and per partner. */
export function Performance(props: { report: PerformanceReport }) {
  const r = props.report;
  const hasEvents = r.totals.clicks + r.totals.leads + r.totals.sales > 0;
  return (
    <section class="card" aria-labelledby="performance-title" id="performance">
      <h2 id="performance-title">Performance, last 30 days</h2>
      <p class="muted">
        Live events per day ({r.timezone}), {r.start.slice(0, 10)} to {r.end.slice(0, 10)}. Test events are
        not counted.
      </p>
      <ul class="totals">
        <li>
          <span class="figure">{r.totals.clicks}</span> clicks
        </li>
        <li>
          <span class="figure">{r.totals.leads}</span> leads
        </li>
        <li>
          <span class="figure">{r.totals.sales}</span> sales
        </li>
        <li>
          <span class="figure">{moneyLine(r.totals.money)}</span> net revenue
        </li>
      </ul>
      <figure class="chart-box">
        <div
          id="performance-chart"
          class="chart"
          role="img"
          aria-label="Clicks, leads and sales per day"
          data-series={JSON.stringify(chartData(r))}
        />
        <figcaption class="empty" hidden={hasEvents}>
          No live events in these 30 days yet: the chart fills in as clicks, leads and sales arrive.
        </figcaption>
      </figure>
      <h3>Per partner</h3>
      {r.partners.length === 0 ? (
        <p class="empty">No partner has live events in this range.</p>
      ) : (
        <div class="scroll">
          <table id="partner-totals">
            <thead>
              <tr>
                <th scope="col">Partner</th>
                <th scope="col">Clicks</th>
                <th scope="col">Leads</th>
                <th scope="col">Sales</th>
                <th scope="col">Net revenue</th>
                <th scope="col">Commission</th>
              </tr>
            </thead>
            <tbody>
              {r.partners.map((p) => (
                <tr>
                  <th scope="row">{p.name}</th>
                  <td>{p.clicks}</td>
                  <td>{p.leads}</td>
                  <td>{p.sales}</td>
                  <td>{moneyLine(p.money)}</td>
                  <td>
                    {Object.entries(p.money)
                      .map(([currency, m]) => formatMoney(m.commission_cents, currency))
                      .join(", ") || "-"}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}
