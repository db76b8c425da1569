import type { settingsView } from "../../../../../lib/programs/settings-view.ts";

/**
 * The program's settings as the settings route's `summary` lines (the `Lead capture mode` line among them),
 * the allowed origins, the payments connection, and the masked keys with regeneration for owners. No key is
 * ever rendered in clear: a regenerated key is shown by the script, once, from the route's answer.
 */
export function Settings(props: {
  programId: number;
  role: string;
  settings: ReturnType<typeof settingsView>;
}) {
  const s = props.settings;
  const origins = s.settings.allowed_origins;
  return (
    <section class="card" aria-labelledby="settings-title" id="settings">
      <h2 id="settings-title">Settings</h2>
      <ul class="summary" id="settings-summary">
        {s.summary.map((line) => (
          <li>{line}</li>
        ))}
      </ul>
      <h3>Allowed origins</h3>
      {origins.length === 0 ? (
        <p class="empty">None: only server calls and same-site pages are accepted.</p>
      ) : (
        <ul id="allowed-origins">
          {origins.map((origin) => (
            <li>
              <code>{origin}</code>
            </li>
          ))}
        </ul>
      )}
      <h3>Fraud</h3>
      <form id="fraud-settings" data-program-id={String(props.programId)} class="stack">
        <label class="check-line">
          <input
            type="checkbox"
            name="hold_flagged_commissions"
            checked={s.settings.hold_flagged_commissions}
          />{" "}
          Hold flagged commissions for review when their hold ends (instead of approving them)
        </label>
        <label class="check-line">
          <input
            type="checkbox"
            name="email_attribution_settled_leads_only"
            checked={s.settings.email_attribution_settled_leads_only}
          />{" "}
          Attribute payments found by email only to settled leads (never to a provisional browser lead)
        </label>
        <div class="inline">
          <button type="submit">Save fraud settings</button>
          <span id="fraud-settings-saved" class="muted" aria-live="polite" />
        </div>
        <p id="fraud-settings-error" class="error" role="alert" hidden />
      </form>
      <h3>Payments</h3>
      {s.settings.stripe_account_id ? (
        <p>
          Connected to <code>{s.settings.stripe_account_id}</code>.
        </p>
      ) : (
        <p>
          Not connected.{" "}
          <a class="button" href={`/api/v1/programs/${props.programId}/stripe-connect`}>
            Connect the payments provider
          </a>
        </p>
      )}
      <h3>API keys</h3>
      <ul id="api-keys">
        {s.api_keys.map((key) => (
          <li>
            <code>{key.masked}</code> ({key.mode})
            {key.rotate_by ? `, retiring ${key.rotate_by.slice(0, 10)}` : ""}
          </li>
        ))}
      </ul>
      {props.role === "owner" ? (
        <form id="regenerate-key" data-program-id={String(props.programId)} class="stack">
          <div class="inline">
            <label for="regenerate-which">Key</label>
            <select id="regenerate-which" name="key">
              <option value="live">Live key</option>
              <option value="test">Test key</option>
            </select>
            <label for="regenerate-mode">Old key</label>
            <select id="regenerate-mode" name="mode">
              <option value="rotate">keeps working for 7 days</option>
              <option value="immediate">stops working now</option>
            </select>
            <button type="submit">Regenerate</button>
          </div>
          <p id="new-key" class="new-key" aria-live="polite" hidden />
          <p id="regenerate-error" class="error" role="alert" hidden />
        </form>
      ) : (
        <p class="muted">Only a workspace owner can regenerate API keys.</p>
      )}
    </section>
  );
}
