import { fraudSection, type ReadinessFraud } from "./fraud-section.ts";
import { type EventSample, evidenceSampleSize, type ReadinessFacts } from "./readiness-store.ts";

export const readinessStages = ["setup", "click", "lead", "sale", "refund", "payments"] as const;
export type ReadinessStage = (typeof readinessStages)[number];
export type CheckStatus = "pass" | "warn" | "fail";
export type Verdict = "ready" | "almost_ready" | "not_ready";

export interface ReadinessCheck {
  /** Stable: clients may key on it. */
  id: string;
  stage: ReadinessStage;
  title: string;
  /** A required check that fails makes the program `not_ready`. */
  required: boolean;
  status: CheckStatus;
  /** What the recorded evidence shows, in one sentence. */
  message: string;
  evidence: Record<string, unknown>;
  /** How to make it pass (or, once it passes, how to test it again). */
  hint: string;
  docs_url: string;
  /** The command-line command that exercises this check. */
  cli: string | null;
}

export interface ReadinessVerdict {
  program_id: number;
  verdict: Verdict;
  summary: string;
  counts: { pass: number; warn: number; fail: number; required: number; required_passing: number };
  /** The first check to fix, in stage order (required failures first); null once every check passes. */
  next_step: { check: string; hint: string } | null;
  checked_at: string;
  /** Evidence counts look at most at this many of the newest events of each kind. */
  evidence_sample_size: number;
  checks: ReadinessCheck[];
  /** Informational, never a check: flagged live rows in the sample and the fraud settings. */
  fraud: ReadinessFraud;
}

export const readinessDocsUrl = "https://docs.affiliate-tracking.dev/readiness";

const iso = (d: Date | null) => (d ? d.toISOString() : null);
const evidenceOf = (s: EventSample) => ({
  count: s.count,
  count_is_lower_bound: s.count >= evidenceSampleSize,
  last_at: iso(s.lastAt),
});

type CheckDraft = Omit<ReadinessCheck, "docs_url">;

function check(draft: CheckDraft): ReadinessCheck {
  return { ...draft, docs_url: `${readinessDocsUrl}#${draft.id}` };
}

/**
 * The readiness rules: every verdict comes from recorded events and stored settings, never from a flag
 * someone set. Live checks count live events only; test events count for `test_event` alone.
 */
export function decideReadiness(facts: ReadinessFacts, now: Date): ReadinessVerdict {
  const f = facts;
  const checks: ReadinessCheck[] = [];

  const keys = f.liveKeys;
  checks.push(
    check({
      id: "api_key",
      stage: "setup",
      title: "A live API key that is not retiring",
      required: true,
      status: keys.active > 0 ? "pass" : keys.retiring > 0 ? "warn" : "fail",
      message:
        keys.active > 0
          ? `${keys.active} live key(s) in use without a rotation deadline.`
          : keys.retiring > 0
            ? `Every live key is marked for rotation; the first stops working at ${iso(keys.earliestRotateBy)}.`
            : "The program has no live API key.",
      evidence: {
        active: keys.active,
        retiring: keys.retiring,
        earliest_rotate_by: iso(keys.earliestRotateBy),
      },
      hint:
        keys.active > 0
          ? "Keep the key on your server only; rotate it from the program settings if it leaks."
          : "Generate a new live API key in the program settings and deploy it before the deadline.",
      cli: "affiliate-tracking-service status",
    }),
  );

  checks.push(
    check({
      id: "referral_link",
      stage: "setup",
      title: "An active referral link with a partner",
      required: true,
      status: f.links.activeWithPartner > 0 ? "pass" : "fail",
      message:
        f.links.activeWithPartner > 0
          ? `${f.links.activeWithPartner} active link(s) belong to an active partner.`
          : f.links.active > 0
            ? "Active links exist, but none belongs to an active partner of the program."
            : "The program has no active referral link.",
      evidence: { active_links: f.links.active, active_links_with_partner: f.links.activeWithPartner },
      hint: "Invite a partner and create (or turn on) a referral link for them.",
      cli: null,
    }),
  );

  const originsSet = f.allowedOrigins.length > 0;
  checks.push(
    check({
      id: "allowed_origins",
      stage: "setup",
      title: "Allowed origins set for the browser tracker",
      required: false,
      status: originsSet ? "pass" : "warn",
      message: originsSet
        ? `${f.allowedOrigins.length} allowed origin(s).`
        : "No allowed origins: browsers on your site cannot call the click and lead routes.",
      evidence: { allowed_origins: f.allowedOrigins },
      hint: "Add every origin (scheme://host[:port]) your pages are served from in the program settings.",
      cli: null,
    }),
  );

  const clicks = f.clicks;
  checks.push(
    check({
      id: "clicks_received",
      stage: "click",
      title: "Live clicks received",
      required: true,
      status: clicks.count > 0 ? "pass" : "fail",
      message:
        clicks.count > 0
          ? `Last live click at ${iso(clicks.lastAt)}.`
          : "No live click recorded yet: open a partner link on your site without test mode.",
      evidence: { ...evidenceOf(clicks), last_origin: clicks.lastOrigin },
      hint: "Load the tracker on your landing pages, then open one of your partner links (?aff=CODE).",
      cli: "affiliate-tracking-service test click",
    }),
  );

  const fromAllowed = clicks.fromAllowedOrigin > 0;
  checks.push(
    check({
      id: "click_origin",
      stage: "click",
      title: "Clicks land on an allowed origin",
      required: false,
      status: fromAllowed ? "pass" : "warn",
      message: fromAllowed
        ? `${clicks.fromAllowedOrigin} of the last ${clicks.count} live clicks landed on an allowed origin.`
        : clicks.count > 0
          ? `None of the last ${clicks.count} live clicks landed on an allowed origin (last seen: ${clicks.lastOtherOrigin}).`
          : "No live click yet to check against the allowed origins.",
      evidence: {
        from_allowed_origin: clicks.fromAllowedOrigin,
        sampled: clicks.count,
        last_other_origin: clicks.lastOtherOrigin,
      },
      hint: "Add the origin your landing pages are served from to the allowed origins, or fix the links' URLs.",
      cli: null,
    }),
  );

  const settled = f.settledLeads;
  const provisional = f.provisionalLeads;
  checks.push(
    check({
      id: "leads_settled",
      stage: "lead",
      title: "Settled leads received",
      required: true,
      status: settled.count > 0 ? "pass" : provisional.count > 0 ? "warn" : "fail",
      message:
        settled.count > 0
          ? `Last settled lead at ${iso(settled.lastAt)}.`
          : provisional.count > 0
            ? "Only provisional (browser) leads so far: under the server_required policy a lead settles only " +
              "when your server sends it with the API key."
            : "No lead recorded yet.",
      evidence: {
        ...evidenceOf(settled),
        provisional: evidenceOf(provisional),
        lead_auth_policy: f.leadAuthPolicy,
      },
      hint:
        provisional.count > 0 && settled.count === 0
          ? "Send POST /api/v1/track/lead from your server with Authorization: Bearer <API key> at signup."
          : "At signup, send POST /api/v1/track/lead with the visitor's click_id and your customer_key.",
      cli: "affiliate-tracking-service test lead",
    }),
  );

  const sales = f.apiSales.count + f.providerSales.count;
  checks.push(
    check({
      id: "sale_with_commission",
      stage: "sale",
      title: "An attributed sale with a commission",
      required: true,
      status: f.commissions.count > 0 ? "pass" : sales > 0 ? "warn" : "fail",
      message:
        f.commissions.count > 0
          ? `Last commission created at ${iso(f.commissions.lastAt)}.`
          : sales > 0
            ? "Sales were recorded but none created a commission (no attributed customer)."
            : "No live sale recorded yet.",
      evidence: { ...evidenceOf(f.commissions), sales_sampled: sales },
      hint: "Record a sale for a customer who came through a partner link (customer_key or click_id).",
      cli: "affiliate-tracking-service test sale",
    }),
  );

  const tests = f.testEvents;
  checks.push(
    check({
      id: "test_event",
      stage: "setup",
      title: "A test event sent with the program key",
      required: false,
      status: tests.count > 0 ? "pass" : "warn",
      message:
        tests.count > 0
          ? `Last test event at ${iso(tests.lastAt)}.`
          : "No test lead or sale sent with the program's API key yet.",
      evidence: evidenceOf(tests),
      hint: "Send a lead or sale with additional_data.test_mode: true and your API key (or run the chain).",
      cli: "affiliate-tracking-service test chain",
    }),
  );

  const api = f.apiSales;
  const provider = f.providerSales;
  const bothPaths = api.count > 0 && (f.paymentsAccountConnected || provider.count > 0);
  const onePath = api.count > 0 || f.paymentsAccountConnected;
  checks.push(
    check({
      id: "sales_path",
      stage: "payments",
      title: "Sales reach us by one path",
      required: true,
      status: bothPaths ? "warn" : onePath ? "pass" : "fail",
      message: bothPaths
        ? "Sales arrive both from your sale calls and from the connected payments provider: a subscription's " +
          "first payment can be counted twice."
        : f.paymentsAccountConnected
          ? "The payments provider is connected; its payments record the sales."
          : api.count > 0
            ? `Sale calls seen; last at ${iso(api.lastAt)}.`
            : "No payments provider connected and no sale call seen.",
      evidence: {
        payments_account_connected: f.paymentsAccountConnected,
        sale_calls: evidenceOf(api),
        provider_sales: evidenceOf(provider),
      },
      hint: bothPaths
        ? "With the payments provider connected, make no sale call (or disconnect it)."
        : "Connect your payments provider in the program settings, or call POST /api/v1/track/sale after each payment.",
      cli: "affiliate-tracking-service test sale",
    }),
  );

  checks.push(
    check({
      id: "refunds_received",
      stage: "refund",
      title: "Refunds reach us",
      required: false,
      status: f.refunds.count > 0 ? "pass" : "warn",
      message:
        f.refunds.count > 0
          ? `Last refund at ${iso(f.refunds.lastAt)}.`
          : "No refund recorded yet: refunded sales would keep paying commission.",
      evidence: evidenceOf(f.refunds),
      hint: f.paymentsAccountConnected
        ? "Refunds at the connected payments provider arrive by themselves; check one reached us."
        : "Call POST /api/v1/track/refund with the sale's transaction_id whenever you refund.",
      cli: null,
    }),
  );

  return { ...summarize(f.programId, checks, now), fraud: fraudSection(f.fraud) };
}

function summarize(programId: number, checks: ReadinessCheck[], now: Date): Omit<ReadinessVerdict, "fraud"> {
  const count = (status: CheckStatus) => checks.filter((c) => c.status === status).length;
  const required = checks.filter((c) => c.required);
  const requiredPassing = required.filter((c) => c.status === "pass").length;
  const failing = count("fail");
  const warning = count("warn");
  const verdict: Verdict = failing > 0 ? "not_ready" : warning > 0 ? "almost_ready" : "ready";
  const stageOrder = (c: ReadinessCheck) => readinessStages.indexOf(c.stage);
  const next = [...checks]
    .filter((c) => c.status !== "pass")
    .sort(
      (a, b) =>
        Number(b.status === "fail") - Number(a.status === "fail") ||
        Number(b.required) - Number(a.required) ||
        stageOrder(a) - stageOrder(b),
    )[0];
  const summary =
    verdict === "ready"
      ? `Ready: all ${checks.length} checks pass.`
      : `${verdict === "not_ready" ? "Not ready" : "Almost ready"}: ${requiredPassing} of ${required.length} ` +
        `required checks pass; ${failing} failing, ${warning} warning.`;
  return {
    program_id: programId,
    verdict,
    summary,
    counts: {
      pass: count("pass"),
      warn: warning,
      fail: failing,
      required: required.length,
      required_passing: requiredPassing,
    },
    next_step: next ? { check: next.id, hint: next.hint } : null,
    checked_at: now.toISOString(),
    evidence_sample_size: evidenceSampleSize,
    checks,
  };
}
