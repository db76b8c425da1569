/**
 * The Webhooks section's actions (part of the page's script, `dashboard/client.ts` wires them): add an
 * endpoint, enable or disable it, send a test event and watch its attempt arrive, rotate its secret, refresh
 * its attempts. Each goes through the webhook JSON routes; a secret is shown once, from the answer that
 * created it, and never kept. Texts come from the same module the server-rendered view uses.
 */
import {
  type AttemptFields,
  attemptResultText,
  type EndpointStateFields,
  endpointStateText,
  maskedSecretText,
  toggleLabel,
  webhookTime,
} from "../lib/dashboard/webhook-texts.ts";

type Json = Record<string, unknown>;

export interface ApiAnswer {
  ok: boolean;
  status: number;
  body: Json;
}

/** The page script's own helpers, handed over so both speak to the routes and show errors alike. */
export interface WebhookPageTools {
  api(method: string, path: string, body?: unknown): Promise<ApiAnswer>;
  errorMessage(answer: ApiAnswer): string;
  showError(element: HTMLElement | null, text: string | null): void;
}

const unreachable = "The service could not be reached. Try again.";
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function element<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  text?: string,
  attributes: Record<string, string> = {},
): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  if (text !== undefined) node.textContent = text;
  for (const [name, value] of Object.entries(attributes)) node.setAttribute(name, value);
  return node;
}

function attemptRow(a: Json): HTMLTableRowElement {
  const row = element("tr", undefined, {
    "data-attempt-id": String(a.id),
    "data-succeeded": String(a.succeeded),
  });
  const eventId = element("td");
  eventId.append(element("code", String(a.event_id)));
  const result = element("td", attemptResultText(a as unknown as AttemptFields), { "data-role": "result" });
  row.append(
    element("td", webhookTime(String(a.attempted_at))),
    element("td", String(a.event_type)),
    eventId,
    result,
    element("td", a.response_status === null ? "-" : String(a.response_status)),
    element("td", `${String(a.latency_ms)} ms`),
    element("td", webhookTime((a.next_attempt_at as string | null) ?? null)),
  );
  return row;
}

/** The card of an endpoint the script just created: the same structure as the server's `EndpointCard`. */
function endpointCard(e: Json): HTMLElement {
  const card = element("article", undefined, { class: "webhook-endpoint" });
  const title = element("h3");
  title.append(element("code", String(e.url)));
  const facts = element("dl", undefined, { class: "webhook-facts" });
  facts.append(
    element("dt", "Events"),
    element("dd", ((e.events as string[]) ?? []).join(", "), { "data-role": "events" }),
    element("dt", "State"),
    element("dd", "", { "data-role": "state" }),
    element("dt", "Secret"),
    element("dd", maskedSecretText(null, new Date()), { "data-role": "secret" }),
  );
  if (typeof e.description === "string" && e.description) {
    facts.append(element("dt", "Description"), element("dd", e.description));
  }
  const actions = element("div", undefined, { class: "inline" });
  for (const [action, label] of [
    ["toggle", ""],
    ["test", "Send test event"],
    ["rotate", "Rotate secret"],
    ["refresh", "Refresh attempts"],
  ]) {
    actions.append(element("button", label, { type: "button", "data-action": String(action) }));
  }
  const table = element("table");
  const head = element("tr");
  for (const label of ["When", "Event", "Event id", "Result", "Response", "Latency", "Next retry"]) {
    head.append(element("th", label, { scope: "col" }));
  }
  const thead = element("thead");
  thead.append(head);
  table.append(thead, element("tbody", undefined, { "data-role": "attempts" }));
  const scroll = element("div", undefined, { class: "scroll" });
  scroll.append(table);
  card.append(
    title,
    facts,
    actions,
    element("h4", "Recent delivery attempts"),
    element("p", "No delivery attempts yet. Send a test event to try the endpoint.", {
      class: "empty",
      "data-role": "attempts-empty",
    }),
    scroll,
  );
  paintEndpoint(card, e);
  return card;
}

function paintEndpoint(card: HTMLElement, e: Json): void {
  card.dataset.endpointId = String(e.id);
  card.dataset.enabled = String(e.enabled);
  const state = card.querySelector<HTMLElement>('[data-role="state"]');
  if (state) state.textContent = endpointStateText(e as unknown as EndpointStateFields);
  const toggle = card.querySelector<HTMLButtonElement>('button[data-action="toggle"]');
  if (toggle) toggle.textContent = toggleLabel(Boolean(e.enabled));
  const secret = card.querySelector<HTMLElement>('[data-role="secret"]');
  if (secret) {
    secret.textContent = maskedSecretText(
      (e.previous_secret_expires_at as string | null) ?? null,
      new Date(),
    );
  }
}

function paintAttempts(card: HTMLElement, attempts: Json[]): void {
  card.querySelector('[data-role="attempts"]')?.replaceChildren(...attempts.slice(0, 10).map(attemptRow));
  const empty = card.querySelector<HTMLElement>('[data-role="attempts-empty"]');
  if (empty) empty.hidden = attempts.length > 0;
}

export function startWebhooks(tools: WebhookPageTools): void {
  const section = document.querySelector<HTMLElement>("#webhooks");
  const list = document.querySelector<HTMLElement>("#webhook-endpoints");
  const programId = section?.dataset.programId;
  if (!section || !list || !programId) return;
  const errorBox = document.querySelector<HTMLElement>("#webhooks-error");
  const notice = document.querySelector<HTMLElement>("#webhooks-notice");
  const base = `/api/v1/programs/${programId}/webhooks`;

  const say = (text: string | null) => {
    if (!notice) return;
    notice.textContent = text ?? "";
    notice.hidden = text === null;
  };

  async function refreshAttempts(card: HTMLElement): Promise<Json[] | null> {
    const answer = await tools.api("GET", `${base}/${card.dataset.endpointId}/attempts`);
    if (!answer.ok) {
      tools.showError(errorBox, tools.errorMessage(answer));
      return null;
    }
    const attempts = ((answer.body.data as Json).attempts as Json[]) ?? [];
    paintAttempts(card, attempts);
    return attempts;
  }

  async function toggle(card: HTMLElement): Promise<void> {
    const enabled = card.dataset.enabled !== "true";
    const answer = await tools.api("PATCH", `${base}/${card.dataset.endpointId}`, { enabled });
    if (!answer.ok) return tools.showError(errorBox, tools.errorMessage(answer));
    paintEndpoint(card, (answer.body.data as Json).endpoint as Json);
  }

  /** Sends the test event, then refreshes the attempts until its first attempt shows (about a second). */
  async function sendTest(card: HTMLElement): Promise<void> {
    const answer = await tools.api("POST", `${base}/${card.dataset.endpointId}/test`);
    if (!answer.ok) return tools.showError(errorBox, tools.errorMessage(answer));
    const eventId = String((answer.body.data as Json).event_id);
    say(`Test event ${eventId} sent; its attempt appears below.`);
    for (let poll = 0; poll < 15; poll++) {
      await pause(poll === 0 ? 300 : 1000);
      const attempts = await refreshAttempts(card);
      if (!attempts || attempts.some((a) => a.event_id === eventId)) return;
    }
  }

  async function rotate(card: HTMLElement): Promise<void> {
    if (!window.confirm("Rotate the secret? The current one keeps signing as well for 24 hours.")) return;
    const answer = await tools.api("POST", `${base}/${card.dataset.endpointId}/rotate-secret`, {
      overlap_hours: 24,
    });
    if (!answer.ok) return tools.showError(errorBox, tools.errorMessage(answer));
    const data = answer.body.data as Json;
    paintEndpoint(card, data.endpoint as Json);
    say(`New secret (shown once, copy it now): ${String(data.secret)}`);
  }

  const actions: Record<string, (card: HTMLElement) => Promise<unknown>> = {
    toggle,
    test: sendTest,
    rotate,
    refresh: refreshAttempts,
  };

  list.addEventListener("click", (event) => {
    const button = (event.target as Element).closest<HTMLButtonElement>("button[data-action]");
    const card = button?.closest<HTMLElement>(".webhook-endpoint");
    const action = actions[button?.dataset.action ?? ""];
    if (!button || !card || !action) return;
    tools.showError(errorBox, null);
    say(null);
    button.disabled = true;
    action(card)
      .catch(() => tools.showError(errorBox, unreachable))
      .finally(() => {
        button.disabled = false;
      });
  });

  const form = document.querySelector<HTMLFormElement>("#create-webhook");
  form?.addEventListener("submit", (event) => {
    event.preventDefault();
    tools.showError(errorBox, null);
    say(null);
    const fields = new FormData(form);
    const body: Json = {
      url: String(fields.get("url") ?? "").trim(),
      events: fields.getAll("events").map(String),
    };
    const description = String(fields.get("description") ?? "").trim();
    if (description) body.description = description;
    const submit = form.querySelector<HTMLButtonElement>("button[type=submit]");
    if (submit) submit.disabled = true;
    tools
      .api("POST", base, body)
      .then((answer) => {
        if (!answer.ok) return tools.showError(errorBox, tools.errorMessage(answer));
        const data = answer.body.data as Json;
        list.append(endpointCard(data.endpoint as Json));
        const empty = section.querySelector<HTMLElement>('[data-role="empty"]');
        if (empty) empty.hidden = true;
        say(`Endpoint added. Its secret (shown once, copy it now): ${String(data.secret)}`);
        form.reset();
      })
      .catch(() => tools.showError(errorBox, unreachable))
      .finally(() => {
        if (submit) submit.disabled = false;
      });
  });
}
