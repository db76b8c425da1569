import type { ProgramWebhooks } from "../../../../../lib/dashboard/page/program-webhooks.ts";
import {
  attemptResultText,
  endpointStateText,
  maskedSecretText,
  toggleLabel,
  webhookTime,
} from "../../../../../lib/dashboard/webhook-texts.ts";
import { webhookEventTypes } from "../../../../../lib/webhooks/event-types.ts";
import type { AttemptView, EndpointView } from "../../../../../lib/webhooks/manage-endpoints.ts";

export function AttemptRow(props: { attempt: AttemptView }) {
  const a = props.attempt;
  return (
    <tr data-attempt-id={String(a.id)} data-succeeded={String(a.succeeded)}>
      <td>{webhookTime(a.attempted_at)}</td>
      <td>{a.event_type}</td>
      <td>
        <code>{a.event_id}</code>
      </td>
      <td data-role="result">{attemptResultText(a)}</td>
      <td>{a.response_status === null ? "-" : String(a.response_status)}</td>
      <td>{`${a.latency_ms} ms`}</td>
      <td>{webhookTime(a.next_attempt_at)}</td>
    </tr>
  );
}

/** One endpoint: what it receives, its state, its masked secret, its actions and its latest attempts. */
export function EndpointCard(props: { endpoint: EndpointView; attempts: AttemptView[]; now: Date }) {
  const e = props.endpoint;
  return (
    <article class="webhook-endpoint" data-endpoint-id={String(e.id)} data-enabled={String(e.enabled)}>
      <h3>
        <code>{e.url}</code>
      </h3>
      <dl class="webhook-facts">
        <dt>Events</dt>
        <dd data-role="events">{e.events.join(", ")}</dd>
        <dt>State</dt>
        <dd data-role="state">{endpointStateText(e)}</dd>
        <dt>Secret</dt>
        <dd data-role="secret">{maskedSecretText(e.previous_secret_expires_at, props.now)}</dd>
        {e.description ? (
          <>
            <dt>Description</dt>
            <dd>{e.description}</dd>
          </>
        ) : null}
      </dl>
      <div class="inline">
        <button type="button" data-action="toggle">
          {toggleLabel(e.enabled)}
        </button>
        <button type="button" data-action="test">
          Send test event
        </button>
        <button type="button" data-action="rotate">
          Rotate secret
        </button>
        <button type="button" data-action="refresh">
          Refresh attempts
        </button>
      </div>
      <h4>Recent delivery attempts</h4>
      <p class="empty" data-role="attempts-empty" hidden={props.attempts.length > 0}>
        No delivery attempts yet. Send a test event to try the endpoint.
      </p>
      <div class="scroll">
        <table>
          <thead>
            <tr>
              <th scope="col">When</th>
              <th scope="col">Event</th>
              <th scope="col">Event id</th>
              <th scope="col">Result</th>
              <th scope="col">Response</th>
              <th scope="col">Latency</th>
              <th scope="col">Next retry</th>
            </tr>
          </thead>
          <tbody data-role="attempts">
            {props.attempts.map((attempt) => (
              <AttemptRow attempt={attempt} />
            ))}
          </tbody>
        </table>
      </div>
    </article>
  );
}

/**
 * The program's webhook endpoints for an owner or admin (a member is told who can), each with its latest
 * attempts, and a form to add one. Every action goes through the webhook JSON routes (the page's script);
 * a secret is shown by the script, once, from the answer that created it.
 */
export function Webhooks(props: { programId: number; webhooks: ProgramWebhooks }) {
  const w = props.webhooks;
  return (
    <section
      class="card"
      aria-labelledby="webhooks-title"
      id="webhooks"
      data-program-id={String(props.programId)}
    >
      <h2 id="webhooks-title">Webhooks</h2>
      <p class="muted">
        Signed events (Standard Webhooks) sent to your backend when leads, sales and commissions happen.
      </p>
      {w.kind === "not_manager" ? (
        <p class="muted" data-role="not-manager">
          Only a workspace owner or admin can manage webhooks.
        </p>
      ) : w.kind === "unavailable" ? (
        <p class="error" role="alert" data-role="unavailable">
          The webhook endpoints could not be loaded. Reload the page in a moment.
        </p>
      ) : (
        <>
          <p class="empty" data-role="empty" hidden={w.endpoints.length > 0}>
            No webhook endpoints yet: add one below.
          </p>
          <div id="webhook-endpoints">
            {w.endpoints.map(({ endpoint, attempts }) => (
              <EndpointCard endpoint={endpoint} attempts={attempts} now={w.readAt} />
            ))}
          </div>
          <p id="webhooks-error" class="error" role="alert" hidden />
          <p id="webhooks-notice" class="new-key" aria-live="polite" hidden />
          <h3>Add an endpoint</h3>
          <form id="create-webhook" class="stack">
            <div class="inline">
              <label for="webhook-url">URL</label>
              <input
                id="webhook-url"
                name="url"
                type="url"
                required
                maxlength={2048}
                placeholder="https://example.com/affiliate-webhooks"
                autocomplete="off"
              />
            </div>
            <fieldset>
              <legend>Events</legend>
              {webhookEventTypes.map((type) => (
                <label class="event-choice">
                  <input type="checkbox" name="events" value={type} checked />
                  {` ${type}`}
                </label>
              ))}
            </fieldset>
            <div class="inline">
              <label for="webhook-description">Description (optional)</label>
              <input id="webhook-description" name="description" maxlength={200} autocomplete="off" />
              <button type="submit">Add endpoint</button>
            </div>
          </form>
        </>
      )}
    </section>
  );
}
