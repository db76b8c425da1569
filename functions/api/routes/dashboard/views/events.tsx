import type { EventsPage, FeedEvent } from "../../../../../lib/dashboard/recent-events.ts";
import { formatMoney, formatWhen } from "./format.ts";

/** What a row says about its event beyond its kind: the link, the customer, the amount. */
export function eventDetail(e: FeedEvent): string {
  if (e.kind === "click") return e.link ? `link ${e.link}` : "";
  if (e.kind === "lead") return `${e.event_name ?? "lead"}${e.provisional ? " (provisional)" : ""}`;
  const amount = e.amount_cents !== null && e.currency ? formatMoney(e.amount_cents, e.currency) : "";
  return e.kind === "refund" && e.reason ? `${amount} (${e.reason})` : amount;
}

/** The fraud signal codes of a row and, for a sale, of its commission: each once, in the order stored. */
export function eventFlags(e: FeedEvent): string[] {
  return [...new Set([...e.fraud_flags, ...(e.commission_fraud_flags ?? [])])];
}

export function EventRow(props: { event: FeedEvent }) {
  const e = props.event;
  const flags = eventFlags(e);
  return (
    <tr data-test={String(e.test)} data-flagged={String(flags.length > 0)}>
      <td>{formatWhen(e.created_at)}</td>
      <td>{e.kind}</td>
      <td>
        <span class={e.test ? "tag tag-test" : "tag tag-live"}>{e.test ? "test" : "live"}</span>
      </td>
      <td>{e.partner?.name ?? "(direct)"}</td>
      <td>
        {eventDetail(e)}
        {flags.length > 0 ? (
          <>
            {" "}
            <span class="tag tag-flag" data-role="flags">
              flagged: {flags.join(", ")}
            </span>
          </>
        ) : null}
      </td>
    </tr>
  );
}

/** The newest events, live and test alike, each marked (the script refreshes the rows after a chain). */
export function RecentEvents(props: { events: EventsPage }) {
  const events = props.events.events;
  return (
    <section class="card" aria-labelledby="events-title" id="events">
      <h2 id="events-title">Recent events</h2>
      <p class="empty" data-role="empty" hidden={events.length > 0}>
        No events yet. Open a partner link on your site, or run the verification chain above.
      </p>
      <div class="scroll">
        <table>
          <caption class="sr-only">Newest clicks, leads, sales and refunds</caption>
          <thead>
            <tr>
              <th scope="col">When</th>
              <th scope="col">Kind</th>
              <th scope="col">Mode</th>
              <th scope="col">Partner</th>
              <th scope="col">Detail</th>
            </tr>
          </thead>
          <tbody id="events-rows">
            {events.map((event) => (
              <EventRow event={event} />
            ))}
          </tbody>
        </table>
      </div>
    </section>
  );
}
