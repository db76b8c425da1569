/**
 * The Webhooks section's actions (part of the page's script, `dashboard/client.ts` wires them): add an
 * endpoint, enable or disable it, send a test event and wait for its attempt, rotate its secret, refresh.
 * Each goes through the webhook JSON routes; the endpoints are then redrawn from the server-rendered page
 * itself (parsed, never executed), so the script carries no copy of the view. A secret is shown once, from
 * the answer that created it, and never kept.
 */

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

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

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

  /** Redraws the endpoints (and the empty state) from a fresh render of this page. */
  async function redraw(): Promise<void> {
    const response = await fetch(`/dashboard?program=${programId}`, { credentials: "same-origin" });
    if (!response.ok) throw new Error("page not read");
    const fresh = new DOMParser().parseFromString(await response.text(), "text/html");
    const endpoints = fresh.querySelector("#webhook-endpoints");
    if (!endpoints) throw new Error("no endpoints in the page");
    list?.replaceChildren(...Array.from(endpoints.childNodes, (node) => document.importNode(node, true)));
    const empty = section?.querySelector<HTMLElement>('[data-role="empty"]');
    if (empty) empty.hidden = endpoints.children.length > 0;
  }

  /** A route call; on success `then` gets its data and the endpoints are redrawn. */
  async function act(method: string, path: string, body: unknown, then: (data: Json) => unknown) {
    const answer = await tools.api(method, path, body);
    if (!answer.ok) return tools.showError(errorBox, tools.errorMessage(answer));
    await then(answer.body.data as Json);
    await redraw();
  }

  /** Waits (up to 15 s) until the test event's first attempt is recorded, through the attempts route. */
  async function attempted(endpointId: string, eventId: string): Promise<void> {
    for (let poll = 0; poll < 15; poll++) {
      await pause(poll === 0 ? 300 : 1000);
      const answer = await tools.api("GET", `${base}/${endpointId}/attempts`);
      const attempts = ((answer.body.data as Json | undefined)?.attempts as Json[] | undefined) ?? [];
      if (!answer.ok || attempts.some((a) => a.event_id === eventId)) return;
    }
  }

  const actions: Record<string, (id: string, card: HTMLElement) => Promise<unknown>> = {
    toggle: (id, card) =>
      act("PATCH", `${base}/${id}`, { enabled: card.dataset.enabled !== "true" }, () => 0),
    test: (id) =>
      act("POST", `${base}/${id}/test`, undefined, async (data) => {
        say(`Test event ${String(data.event_id)} sent; its attempt appears below.`);
        await attempted(id, String(data.event_id));
      }),
    rotate: async (id) => {
      if (!window.confirm("Rotate the secret? The current one keeps signing as well for 24 hours.")) return;
      await act("POST", `${base}/${id}/rotate-secret`, { overlap_hours: 24 }, (data) =>
        say(`New secret (shown once, copy it now): ${String(data.secret)}`),
      );
    },
    refresh: () => redraw(),
  };

  const run = (button: HTMLButtonElement | null, work: () => Promise<unknown>) => {
    tools.showError(errorBox, null);
    say(null);
    if (button) button.disabled = true;
    work()
      .catch(() => tools.showError(errorBox, "The service could not be reached. Try again."))
      .finally(() => {
        if (button) button.disabled = false;
      });
  };

  list.addEventListener("click", (event) => {
    const button = (event.target as Element).closest<HTMLButtonElement>("button[data-action]");
    const card = button?.closest<HTMLElement>(".webhook-endpoint");
    const action = actions[button?.dataset.action ?? ""];
    const id = card?.dataset.endpointId;
    if (button && card && action && id) run(button, () => action(id, card));
  });

  const form = document.querySelector<HTMLFormElement>("#create-webhook");
  form?.addEventListener("submit", (event) => {
    event.preventDefault();
    const fields = new FormData(form);
    const body: Json = {
      url: String(fields.get("url") ?? "").trim(),
      events: fields.getAll("events").map(String),
    };
    const description = String(fields.get("description") ?? "").trim();
    if (description) body.description = description;
    run(form.querySelector<HTMLButtonElement>("button[type=submit]"), () =>
      act("POST", base, body, (data) => {
        say(`Endpoint added. Its secret (shown once, copy it now): ${String(data.secret)}`);
        form.reset();
      }),
    );
  });
}
