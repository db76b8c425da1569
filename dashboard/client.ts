/**
 * The dashboard page's script (a static asset of the console worker, `npm run build:dashboard`): the chart,
 * and the actions that change things, each through the JSON routes. Same-origin `fetch` sends the session
 * cookie and this origin's `Origin`, which the routes require of a cookie-authenticated write (CSRF). Every
 * text from the server is set with `textContent`, never as HTML.
 */
import uPlot from "uplot";
import { startWebhooks } from "./webhooks.ts";

type Json = Record<string, unknown>;

interface ApiAnswer {
  ok: boolean;
  status: number;
  body: Json;
}

const $ = <T extends Element = HTMLElement>(selector: string, root: ParentNode = document) =>
  root.querySelector<T & Element>(selector) as (T & HTMLElement) | null;

async function api(method: string, path: string, body?: unknown): Promise<ApiAnswer> {
  const response = await fetch(path, {
    method,
    credentials: "same-origin",
    headers: body === undefined ? {} : { "Content-Type": "application/json" },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  let parsed: Json = {};
  try {
    parsed = (await response.json()) as Json;
  } catch {
    // An empty or non-JSON answer: the status alone says what happened.
  }
  return { ok: response.ok, status: response.status, body: parsed };
}

/** The message of an error envelope, whatever its shape, or a fallback naming the status. */
function errorMessage(answer: ApiAnswer): string {
  const error = answer.body.error as Json | string | undefined;
  const message =
    (typeof error === "object" && error && typeof error.message === "string" && error.message) ||
    (typeof answer.body.message === "string" && answer.body.message) ||
    (typeof error === "string" && error) ||
    "";
  if (answer.status === 401) return "Your sign-in expired. Reload the page to sign in again.";
  return message ? `${message} (HTTP ${answer.status})` : `The request failed (HTTP ${answer.status}).`;
}

function showError(element: HTMLElement | null, text: string | null): void {
  if (!element) return;
  element.textContent = text ?? "";
  element.hidden = text === null;
}

function programId(): string | null {
  return $("#program-view")?.dataset.programId ?? null;
}

// ---- chart ----

const seriesColors = { clicks: "#1d4ed8", leads: "#b45309", sales: "#047857" } as const;

function drawChart(): void {
  const box = $("#performance-chart");
  if (!box?.dataset.series) return;
  const data = JSON.parse(box.dataset.series) as {
    dates: string[];
    clicks: number[];
    leads: number[];
    sales: number[];
  };
  const xs = data.dates.map((d) => Date.parse(`${d}T00:00:00Z`) / 1000);
  const size = () => ({ width: Math.max(240, box.clientWidth), height: 260 });
  const chart = new uPlot(
    {
      ...size(),
      tzDate: (ts) => uPlot.tzDate(new Date(ts * 1000), "Etc/UTC"),
      scales: { x: { time: true }, y: { range: (_u, _min, max) => [0, Math.max(4, Math.ceil(max * 1.1))] } },
      axes: [{}, { label: "events per day" }],
      series: [
        {},
        { label: "Clicks", stroke: seriesColors.clicks, width: 2, fill: "rgba(29,78,216,0.08)" },
        { label: "Leads", stroke: seriesColors.leads, width: 2 },
        { label: "Sales", stroke: seriesColors.sales, width: 2 },
      ],
    },
    [xs, data.clicks, data.leads, data.sales],
    box,
  );
  box.dataset.drawn = "true";
  let pending = 0;
  window.addEventListener("resize", () => {
    cancelAnimationFrame(pending);
    pending = requestAnimationFrame(() => chart.setSize(size()));
  });
}

// ---- readiness and the verification chain ----

const statusLabel: Record<string, string> = { pass: "Pass", warn: "Warning", fail: "Fail" };
const verdictLabel: Record<string, string> = {
  ready: "Ready",
  almost_ready: "Almost ready",
  not_ready: "Not ready",
};

function renderReadiness(verdict: Json): void {
  const section = $("#readiness");
  if (!section) return;
  section.dataset.verdict = String(verdict.verdict);
  const verdictBadge = $('[data-role="verdict"]', section);
  if (verdictBadge)
    verdictBadge.textContent = verdictLabel[String(verdict.verdict)] ?? String(verdict.verdict);
  const summary = $('[data-role="summary"]', section);
  if (summary) summary.textContent = String(verdict.summary);
  for (const check of (verdict.checks as Json[]) ?? []) {
    const row = $(`li[data-check="${String(check.id)}"]`, section);
    if (!row) continue;
    row.dataset.status = String(check.status);
    const status = $('[data-role="status"]', row);
    if (status) status.textContent = statusLabel[String(check.status)] ?? String(check.status);
    const message = $('[data-role="message"]', row);
    if (message) message.textContent = String(check.message);
    const hint = $('[data-role="hint"]', row);
    if (hint) hint.textContent = String(check.hint);
    const evidence = $('[data-role="evidence"]', row);
    if (evidence) {
      evidence.replaceChildren();
      for (const [key, value] of Object.entries((check.evidence as Json) ?? {})) {
        const dt = document.createElement("dt");
        dt.textContent = key;
        const dd = document.createElement("dd");
        dd.textContent =
          value === null ? "-" : typeof value === "object" ? JSON.stringify(value) : String(value);
        evidence.append(dt, dd);
      }
    }
  }
}

function setStep(step: string, state: string, text: string): void {
  const row = $(`#verification-steps li[data-step="${step}"]`);
  if (!row) return;
  row.dataset.state = state;
  const label = $('[data-role="state"]', row);
  if (label) label.textContent = text;
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function runVerification(button: HTMLButtonElement): Promise<void> {
  const id = button.dataset.programId;
  const errorBox = $("#verification-error");
  const steps = $("#verification-steps");
  if (!id || !steps) return;
  button.disabled = true;
  showError(errorBox, null);
  steps.hidden = false;
  for (const step of ["click", "lead", "sale"]) setStep(step, "running", "sending...");
  try {
    const run = await api("POST", `/api/tracking/run-verification/${id}`);
    if (!run.ok) {
      for (const step of ["click", "lead", "sale"]) setStep(step, "waiting", "not sent");
      showError(errorBox, errorMessage(run));
      return;
    }
    const data = run.body.data as Json;
    const reports = (data.steps as Json[]) ?? [];
    const sent: { kind: string; id: unknown }[] = [];
    for (const report of reports) {
      const step = String(report.step);
      if (report.ok) {
        setStep(step, "sent", `sent (HTTP ${String(report.status)}), checking it landed...`);
        sent.push({ kind: step, id: report.id });
      } else {
        setStep(step, "failed", `refused (HTTP ${String(report.status)}): ${String(report.message ?? "")}`);
      }
    }
    // Each step is confirmed from the recorded events, one after the other, so the person sees them land.
    for (let attempt = 0; attempt < 10 && sent.length > 0; attempt++) {
      const check = await api("POST", "/api/tracking/check-test-events", {
        program_id: Number(id),
        events: sent,
      });
      if (!check.ok) {
        showError(errorBox, errorMessage(check));
        break;
      }
      const events = ((check.body.data as Json).events as Json[]) ?? [];
      for (const event of events) {
        if (!event.landed) continue;
        setStep(String(event.kind), "landed", `landed at ${String(event.recorded_at).slice(11, 19)} UTC`);
        await pause(150);
      }
      if ((check.body.data as Json).all_landed) break;
      await pause(500);
    }
    const readiness = await api("GET", `/api/tracking/readiness/${id}`);
    if (readiness.ok) renderReadiness(readiness.body);
    else showError(errorBox, errorMessage(readiness));
    await refreshEvents(id);
  } catch {
    showError(errorBox, "The service could not be reached. Check your connection and try again.");
  } finally {
    button.disabled = false;
  }
}

// ---- recent events ----

function cell(text: string): HTMLTableCellElement {
  const td = document.createElement("td");
  td.textContent = text;
  return td;
}

function eventDetail(e: Json): string {
  if (e.kind === "click") return e.link ? `link ${String(e.link)}` : "";
  if (e.kind === "lead") return `${String(e.event_name ?? "lead")}${e.provisional ? " (provisional)" : ""}`;
  const amount =
    typeof e.amount_cents === "number" && e.currency
      ? `${(e.amount_cents / 100).toFixed(2)} ${String(e.currency).toUpperCase()}`
      : "";
  return e.kind === "refund" && e.reason ? `${amount} (${String(e.reason)})` : amount;
}

/** The row's fraud codes and, for a sale, its commission's: each once (the server view does the same). */
function eventFlags(e: Json): string[] {
  const own = Array.isArray(e.fraud_flags) ? e.fraud_flags : [];
  const commission = Array.isArray(e.commission_fraud_flags) ? e.commission_fraud_flags : [];
  return [...new Set([...own, ...commission].map(String))];
}

function detailCell(e: Json): HTMLTableCellElement {
  const td = cell(eventDetail(e));
  const flags = eventFlags(e);
  if (flags.length > 0) {
    const tag = document.createElement("span");
    tag.className = "tag tag-flag";
    tag.dataset.role = "flags";
    tag.textContent = `flagged: ${flags.join(", ")}`;
    td.append(" ", tag);
  }
  return td;
}

async function refreshEvents(id: string): Promise<void> {
  const answer = await api("GET", `/api/tracking/events/${id}?limit=12`);
  const body = $("#events-rows");
  if (!answer.ok || !body) return;
  const events = ((answer.body.data as Json).events as Json[]) ?? [];
  body.replaceChildren(
    ...events.map((e) => {
      const row = document.createElement("tr");
      row.dataset.test = String(e.test);
      row.dataset.flagged = String(eventFlags(e).length > 0);
      const at = String(e.created_at);
      const mode = document.createElement("td");
      const tag = document.createElement("span");
      tag.className = e.test ? "tag tag-test" : "tag tag-live";
      tag.textContent = e.test ? "test" : "live";
      mode.append(tag);
      const partner = e.partner as Json | null;
      row.append(
        cell(`${at.slice(0, 10)} ${at.slice(11, 16)} UTC`),
        cell(String(e.kind)),
        mode,
        cell(partner ? String(partner.name) : "(direct)"),
        detailCell(e),
      );
      return row;
    }),
  );
  const empty = $('#events [data-role="empty"]');
  if (empty) empty.hidden = events.length > 0;
}

// ---- links ----

function linkRow(link: Json): HTMLTableRowElement {
  const row = document.createElement("tr");
  row.dataset.linkId = String(link.id);
  row.dataset.active = String(link.active);
  const code = document.createElement("th");
  code.scope = "row";
  const codeText = document.createElement("code");
  codeText.textContent = String(link.short_link);
  code.append(codeText);
  const state = cell(link.active ? "on" : "off");
  state.dataset.role = "state";
  const action = document.createElement("td");
  const button = document.createElement("button");
  button.type = "button";
  button.className = "link-toggle";
  button.dataset.linkId = String(link.id);
  action.append(button);
  row.append(code, cell(String(link.partner_name ?? "-")), state, action);
  paintLink(row, Boolean(link.active), String(link.short_link));
  return row;
}

function paintLink(row: HTMLElement, active: boolean, code: string): void {
  row.dataset.active = String(active);
  const state = $('[data-role="state"]', row);
  if (state) state.textContent = active ? "on" : "off";
  const button = $<HTMLButtonElement>("button.link-toggle", row);
  if (button) {
    button.textContent = active ? "Turn off" : "Turn on";
    button.setAttribute("aria-label", `${active ? "Turn off" : "Turn on"} ${code}`);
  }
}

async function toggleLink(button: HTMLButtonElement): Promise<void> {
  const id = programId();
  const row = button.closest<HTMLElement>("tr");
  if (!id || !row) return;
  const errorBox = $("#links-error");
  showError(errorBox, null);
  button.disabled = true;
  try {
    const active = row.dataset.active !== "true";
    const answer = await api("PATCH", `/api/v1/programs/${id}/links/${button.dataset.linkId}`, { active });
    if (!answer.ok) return showError(errorBox, errorMessage(answer));
    const link = (answer.body.data as Json).link as Json;
    paintLink(row, Boolean(link.active), String(link.short_link));
  } catch {
    showError(errorBox, "The service could not be reached. Try again.");
  } finally {
    button.disabled = false;
  }
}

async function createLink(form: HTMLFormElement): Promise<void> {
  const id = programId();
  if (!id) return;
  const errorBox = $("#links-error");
  showError(errorBox, null);
  const fields = new FormData(form);
  const code = String(fields.get("short_link") ?? "").trim();
  const body: Json = { partner_id: Number(fields.get("partner_id")) };
  if (code) body.short_link = code;
  const submit = $<HTMLButtonElement>("button[type=submit]", form);
  if (submit) submit.disabled = true;
  try {
    const answer = await api("POST", `/api/v1/programs/${id}/links`, body);
    if (!answer.ok) return showError(errorBox, errorMessage(answer));
    $("#links-rows")?.append(linkRow((answer.body.data as Json).link as Json));
    const empty = $('#links [data-role="empty"]');
    if (empty) empty.hidden = true;
    form.reset();
  } catch {
    showError(errorBox, "The service could not be reached. Try again.");
  } finally {
    if (submit) submit.disabled = false;
  }
}

// ---- settings ----

/** The settings route's summary lines, as the server renders them. */
function renderSummary(data: Json): void {
  const lines = (data.summary as unknown[]) ?? [];
  $("#settings-summary")?.replaceChildren(
    ...lines.map((line) => {
      const item = document.createElement("li");
      item.textContent = String(line);
      return item;
    }),
  );
}

/** The masked keys still in use, as the server renders them (a rotating one with its retirement day). */
function renderKeys(data: Json): void {
  const keys = (data.api_keys as Json[]) ?? [];
  $("#api-keys")?.replaceChildren(
    ...keys.map((key) => {
      const item = document.createElement("li");
      const code = document.createElement("code");
      code.textContent = String(key.masked);
      const rotateBy = typeof key.rotate_by === "string" ? `, retiring ${key.rotate_by.slice(0, 10)}` : "";
      item.append(code, ` (${String(key.mode)})${rotateBy}`);
      return item;
    }),
  );
}

async function saveFraudSettings(form: HTMLFormElement): Promise<void> {
  const id = form.dataset.programId;
  const errorBox = $("#fraud-settings-error");
  const saved = $("#fraud-settings-saved");
  showError(errorBox, null);
  if (saved) saved.textContent = "";
  const checked = (name: string) => Boolean($<HTMLInputElement>(`input[name=${name}]`, form)?.checked);
  const body = {
    hold_flagged_commissions: checked("hold_flagged_commissions"),
    email_attribution_settled_leads_only: checked("email_attribution_settled_leads_only"),
  };
  const submit = $<HTMLButtonElement>("button[type=submit]", form);
  if (submit) submit.disabled = true;
  try {
    const answer = await api("PATCH", `/api/v1/programs/${id}/settings`, body);
    if (!answer.ok) return showError(errorBox, errorMessage(answer));
    const data = answer.body.data as Json;
    renderSummary(data);
    const changed = (data.changed as unknown[]) ?? [];
    if (saved) saved.textContent = changed.length > 0 ? "Saved." : "Nothing changed.";
  } catch {
    showError(errorBox, "The service could not be reached. Try again.");
  } finally {
    if (submit) submit.disabled = false;
  }
}

// ---- keys and sign-out ----

async function regenerateKey(form: HTMLFormElement): Promise<void> {
  const id = form.dataset.programId;
  const fields = new FormData(form);
  const key = String(fields.get("key"));
  const mode = String(fields.get("mode"));
  const errorBox = $("#regenerate-error");
  const output = $("#new-key");
  showError(errorBox, null);
  const warning =
    mode === "immediate"
      ? `Regenerate the ${key} key? The current one stops working at once.`
      : `Regenerate the ${key} key? The current one keeps working for 7 days.`;
  if (!window.confirm(warning)) return;
  const body: Json = { key, mode };
  if (mode === "rotate") body.rotate_by = new Date(Date.now() + 7 * 86_400_000).toISOString();
  try {
    const answer = await api("POST", `/api/v1/programs/${id}/api-keys/regenerate`, body);
    if (!answer.ok) return showError(errorBox, errorMessage(answer));
    if (output) {
      output.textContent = `New ${key} key (shown once, copy it now): ${String((answer.body.data as Json).api_key)}`;
      output.hidden = false;
    }
    // The masked keys and the summary's key lines now name the new key (and the old one's retirement).
    const settings = await api("GET", `/api/v1/programs/${id}/settings`).catch(() => null);
    if (!settings?.ok)
      return showError(errorBox, "The key was regenerated; reload the page to see the keys.");
    renderSummary(settings.body.data as Json);
    renderKeys(settings.body.data as Json);
  } catch {
    showError(errorBox, "The service could not be reached. Try again.");
  }
}

/**
 * Signs out, and says so only once the service revoked the sign-in (a 401: it already was): a refusal (a
 * 429, a 500) or no answer leaves the session valid, so the person is told beside the button instead.
 */
async function signOut(form: HTMLFormElement): Promise<void> {
  let box = $("#sign-out-error", form);
  if (!box) {
    box = document.createElement("p");
    box.id = "sign-out-error";
    box.className = "error";
    box.setAttribute("role", "alert");
    form.append(box);
  }
  showError(box, null);
  const answer = await api("POST", "/api/v1/auth/sign-out").catch(() => null);
  if (answer && (answer.ok || answer.status === 401)) return window.location.assign("/dashboard/signed-out");
  showError(
    box,
    `Not signed out: ${answer ? errorMessage(answer) : "the service could not be reached. Try again."}`,
  );
}

// ---- wiring ----

function start(): void {
  drawChart();
  const verify = $<HTMLButtonElement>("#run-verification");
  verify?.addEventListener("click", () => void runVerification(verify));
  $("#links-rows")?.addEventListener("click", (event) => {
    const button = (event.target as Element).closest<HTMLButtonElement>("button.link-toggle");
    if (button) void toggleLink(button);
  });
  for (const [selector, action] of [
    ["#create-link", createLink],
    ["#regenerate-key", regenerateKey],
    ["#fraud-settings", saveFraudSettings],
  ] as const) {
    const form = $<HTMLFormElement>(selector);
    form?.addEventListener("submit", (event) => {
      event.preventDefault();
      void action(form as HTMLFormElement);
    });
  }
  // A refusal answers the code it was sent with: it goes once the code is edited.
  $<HTMLFormElement>("#create-link")?.addEventListener("input", () => showError($("#links-error"), null));
  const signOutForm = $<HTMLFormElement>("#sign-out");
  signOutForm?.addEventListener("submit", (event) => {
    event.preventDefault();
    void signOut(signOutForm as HTMLFormElement);
  });
  startWebhooks({ api, errorMessage, showError });
  document.documentElement.dataset.ready = "true";
}

if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
else start();
