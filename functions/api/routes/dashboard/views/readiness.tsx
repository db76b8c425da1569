import type { ReadinessCheck, ReadinessVerdict } from "../../../../../lib/readiness/decide-readiness.ts";
import { evidenceText } from "./format.ts";

export const statusLabel = { pass: "Pass", warn: "Warning", fail: "Fail" } as const;
export const verdictLabel = { ready: "Ready", almost_ready: "Almost ready", not_ready: "Not ready" } as const;

function Check(props: { check: ReadinessCheck }) {
  const c = props.check;
  return (
    <li class="check" data-check={c.id} data-status={c.status}>
      <div class="check-head">
        <span class="badge" data-role="status">
          {statusLabel[c.status]}
        </span>
        <strong>{c.title}</strong>
        {c.required ? <span class="muted"> (required)</span> : null}
      </div>
      <p data-role="message">{c.message}</p>
      <details>
        <summary>Evidence and fix</summary>
        <dl class="evidence" data-role="evidence">
          {Object.entries(c.evidence).map(([key, value]) => (
            <>
              <dt>{key}</dt>
              <dd>{evidenceText(value)}</dd>
            </>
          ))}
        </dl>
        <p>
          <span class="label">Fix: </span>
          <span data-role="hint">{c.hint}</span>
        </p>
        {c.cli ? (
          <p>
            <span class="label">Try: </span>
            <code>{c.cli}</code>
          </p>
        ) : null}
        <p>
          <a href={c.docs_url}>Documentation for this check</a>
        </p>
      </details>
    </li>
  );
}

/** Informational, never a check: flagged live rows among the newest events, and the codes seen. */
function FraudSignals(props: { fraud: ReadinessVerdict["fraud"] }) {
  const f = props.fraud;
  const total = f.flagged.leads + f.flagged.sales + f.flagged.commissions;
  return (
    <div class="fraud" id="fraud-signals" data-flagged={String(total)}>
      <h3>Fraud signals</h3>
      <p data-role="fraud-message">{f.message}</p>
      {total > 0 ? (
        <dl class="evidence">
          <dt>Flagged leads</dt>
          <dd data-role="flagged-leads">{f.flagged.leads}</dd>
          <dt>Flagged sales</dt>
          <dd data-role="flagged-sales">{f.flagged.sales}</dd>
          <dt>Flagged commissions</dt>
          <dd data-role="flagged-commissions">{f.flagged.commissions}</dd>
        </dl>
      ) : null}
    </div>
  );
}

/** The checklist, and the button that runs the synthetic click -> lead -> sale chain (the script drives it). */
export function Readiness(props: { programId: number; readiness: ReadinessVerdict }) {
  const r = props.readiness;
  return (
    <section class="card" aria-labelledby="readiness-title" id="readiness" data-verdict={r.verdict}>
      <h2 id="readiness-title">Readiness</h2>
      <p class="verdict">
        <span class="badge" data-role="verdict">
          {verdictLabel[r.verdict]}
        </span>{" "}
        <span data-role="summary">{r.summary}</span>
      </p>
      <ol class="checks">
        {r.checks.map((check) => (
          <Check check={check} />
        ))}
      </ol>
      <FraudSignals fraud={r.fraud} />
      <div class="verify">
        <button type="button" id="run-verification" data-program-id={String(props.programId)}>
          Run the verification chain
        </button>
        <p class="muted">Sends a test click, lead and sale through the tracking endpoints (test mode).</p>
        <ol id="verification-steps" class="steps" aria-live="polite" hidden>
          {(["click", "lead", "sale"] as const).map((step) => (
            <li data-step={step} data-state="waiting">
              <span class="step-name">{step}</span>: <span data-role="state">waiting</span>
            </li>
          ))}
        </ol>
        <p id="verification-error" class="error" role="alert" hidden />
      </div>
    </section>
  );
}
