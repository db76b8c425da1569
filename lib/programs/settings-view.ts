import { maskApiKey } from "../auth/api-keys.ts";
import type { ProgramSettings } from "./decide-settings-change.ts";
import type { StoredKey, StoredSettings } from "./settings-store.ts";

/** The lead auth policy in words, for the `Lead capture mode` line (spec section 2). */
export const leadCaptureModeText = {
  server_required: "Server required (browser leads are provisional until your server confirms them)",
  browser_allowed: "Browser allowed (browser leads settle directly)",
} as const;

function commissionText(s: Pick<ProgramSettings, "commissionType" | "commissionRate" | "durationMonths">) {
  const recurring = s.commissionType.startsWith("recurring_");
  const amount = s.commissionType.endsWith("percent")
    ? `${s.commissionRate}% of each ${recurring ? "payment" : "sale"}`
    : `${s.commissionRate} (sale currency) per ${recurring ? "payment" : "sale"}`;
  if (!recurring) return amount;
  return s.durationMonths === 0
    ? `${amount}, for the customer's lifetime`
    : `${amount}, for ${s.durationMonths} month${s.durationMonths === 1 ? "" : "s"}`;
}

function keyView(key: StoredKey) {
  return {
    id: key.id,
    mode: key.isTest ? ("test" as const) : ("live" as const),
    masked: maskApiKey(key.keyPrefix, key.keyLast4),
    created_at: key.createdAt.toISOString(),
    rotate_by: key.rotateBy ? key.rotateBy.toISOString() : null,
  };
}

/** The key callers should use: the newest one of that mode that is not being rotated out. */
function currentKey(keys: readonly StoredKey[], isTest: boolean): string | null {
  const key =
    keys.find((k) => k.isTest === isTest && k.rotateBy === null) ?? keys.find((k) => k.isTest === isTest);
  return key ? maskApiKey(key.keyPrefix, key.keyLast4) : null;
}

/**
 * What happens to a flagged commission. Holding needs a hold period: with 0 days a commission is approved
 * with its sale, before the fraud scan (the every-minute job) has looked at it, so none is ever held.
 */
function flaggedCommissionsText(s: ProgramSettings): string {
  if (!s.holdFlaggedCommissions) return "approved when their hold ends (flags are only shown)";
  if (s.holdDays > 0) return "held for review when their hold ends";
  return "held for review when their hold ends; with a hold period of 0 days none is held (approved with the sale, before the fraud scan): set hold_days to 1 or more";
}

/** Lines a person reads, beside the machine fields; `Lead capture mode` is one of them. */
export function settingsSummary(s: ProgramSettings, keys: readonly StoredKey[]): string[] {
  const rules = s.commissionRules.length;
  return [
    `Program: ${s.name} (${s.domain})`,
    `Attribution window: ${s.attributionWindowDays} day${s.attributionWindowDays === 1 ? "" : "s"}`,
    `Lead capture mode: ${leadCaptureModeText[s.leadAuthPolicy]}`,
    `Allowed origins: ${s.allowedOrigins.length > 0 ? s.allowedOrigins.join(", ") : "none (only server calls and same-site pages)"}`,
    `Commission: ${commissionText(s)}`,
    `Hold period: ${s.holdDays} day${s.holdDays === 1 ? "" : "s"} before a commission is approved`,
    `Per-product rules: ${rules === 0 ? "none" : `${rules} rule${rules === 1 ? "" : "s"}`}`,
    `Flagged commissions: ${flaggedCommissionsText(s)}`,
    `Payments found by email: ${s.emailAttributionSettledLeadsOnly ? "attributed to settled leads only" : "attributed to settled or provisional leads"}`,
    `Payments: ${s.stripeAccountId ? `connected (${s.stripeAccountId})` : "not connected"}`,
    `API key: ${currentKey(keys, false) ?? "none"}`,
    `Test API key: ${currentKey(keys, true) ?? "none"}`,
  ];
}

/**
 * The settings response's `data`: machine fields, masked keys, and the summary lines. The keys are those still
 * in use at `now`: a key past its rotation deadline answers every request 401 (spec section 5), so it is no
 * key of the program any more, only a row kept for its history.
 */
export function settingsView(stored: StoredSettings, now: Date) {
  const s = stored.settings;
  const keys = stored.keys.filter((key) => key.rotateBy === null || key.rotateBy.getTime() > now.getTime());
  return {
    program_id: stored.programId,
    workspace_id: stored.advertiserId,
    settings: {
      name: s.name,
      domain: s.domain,
      attribution_window_days: s.attributionWindowDays,
      lead_auth_policy: s.leadAuthPolicy,
      allowed_origins: s.allowedOrigins,
      commission_type: s.commissionType,
      commission_rate: Number(s.commissionRate),
      duration_months: s.durationMonths,
      hold_days: s.holdDays,
      commission_rules: s.commissionRules.map((rule) => ({
        product_id: rule.productId,
        commission_type: rule.commissionType,
        commission_rate: Number(rule.commissionRate),
        duration_months: rule.durationMonths,
      })),
      stripe_account_id: s.stripeAccountId,
      hold_flagged_commissions: s.holdFlaggedCommissions,
      email_attribution_settled_leads_only: s.emailAttributionSettledLeadsOnly,
    },
    api_key: currentKey(keys, false),
    test_api_key: currentKey(keys, true),
    api_keys: keys.map(keyView),
    summary: settingsSummary(s, keys),
  };
}
