import { type CommissionType, type LeadAuthPolicy, leadAuthPolicies } from "../../schema/programs.ts";
import { hasControlCharacter } from "../validation/storable-text.ts";
import {
  checkCommissionRate,
  checkCommissionType,
  checkDomain,
  checkDurationMonths,
  checkName,
  checkWindowDays,
  type FieldCheck,
} from "./program-rules.ts";

/** A per-product rule: overrides the program's type and rate for sales of `productId`. */
export interface CommissionRuleSetting {
  productId: string;
  commissionType: CommissionType;
  /** Decimal string as stored (`numeric(14, 4)`), normalised (`"20"`, `"7.5"`). */
  commissionRate: string;
  durationMonths: number | null;
}

/** Every setting a brand changes through `PATCH /api/v1/programs/:id/settings`. */
export interface ProgramSettings {
  name: string;
  domain: string;
  attributionWindowDays: number;
  leadAuthPolicy: LeadAuthPolicy;
  allowedOrigins: string[];
  commissionType: CommissionType;
  commissionRate: string;
  durationMonths: number;
  holdDays: number;
  commissionRules: CommissionRuleSetting[];
  stripeAccountId: string | null;
  /** Fraud: a flagged commission stays pending for review when its hold ends instead of being approved. */
  holdFlaggedCommissions: boolean;
  /** Fraud: a payment found by the buyer's email is attributed only to a settled lead, never a provisional one. */
  emailAttributionSettledLeadsOnly: boolean;
}

/** The body's field names (snake_case), in the order they are checked. */
export const settingFields = [
  "name",
  "domain",
  "attribution_window_days",
  "lead_auth_policy",
  "allowed_origins",
  "commission_type",
  "commission_rate",
  "duration_months",
  "hold_days",
  "commission_rules",
  "stripe_account_id",
  "hold_flagged_commissions",
  "email_attribution_settled_leads_only",
] as const;
export type SettingField = (typeof settingFields)[number];

export type SettingChanges = Partial<Record<SettingField, { from: unknown; to: unknown }>>;

export type SettingsDecision =
  | { ok: true; next: ProgramSettings; changes: SettingChanges }
  | { ok: false; field: string; message: string };

export const NO_SETTINGS_MESSAGE = "No settings to change: send at least one setting";
export const MAX_ALLOWED_ORIGINS = 50;
export const MAX_COMMISSION_RULES = 100;
export const MAX_HOLD_DAYS = 365;
const ORIGIN_MESSAGE =
  "must be an origin scheme://host[:port] with http or https and nothing after the host or port";

function fail(field: string, message: string): SettingsDecision {
  return { ok: false, field, message };
}

/** `https://shop.example.com` or `http://localhost:3000`: exactly what the URL parser calls its origin. */
export function checkOrigin(value: unknown): boolean {
  if (typeof value !== "string" || value.length > 300) return false;
  try {
    const url = new URL(value);
    if (url.protocol !== "http:" && url.protocol !== "https:") return false;
    return url.origin === value;
  } catch {
    return false;
  }
}

function checkAllowedOrigins(value: unknown): FieldCheck<string[]> {
  if (!Array.isArray(value) || value.length > MAX_ALLOWED_ORIGINS) {
    return {
      ok: false,
      field: "allowed_origins",
      message: `allowed_origins must be a list of at most ${MAX_ALLOWED_ORIGINS} origins`,
    };
  }
  const origins: string[] = [];
  for (const [index, item] of value.entries()) {
    if (!checkOrigin(item)) {
      return { ok: false, field: "allowed_origins", message: `allowed_origins[${index}] ${ORIGIN_MESSAGE}` };
    }
    if (!origins.includes(item as string)) origins.push(item as string);
  }
  return { ok: true, value: origins };
}

function checkHoldDays(value: unknown): FieldCheck<number> {
  if (typeof value !== "number" || !Number.isInteger(value) || value < 0 || value > MAX_HOLD_DAYS) {
    return {
      ok: false,
      field: "hold_days",
      message: `hold_days must be a whole number of days from 0 to ${MAX_HOLD_DAYS}`,
    };
  }
  return { ok: true, value };
}

function checkLeadAuthPolicy(value: unknown): FieldCheck<LeadAuthPolicy> {
  if (typeof value === "string" && (leadAuthPolicies as readonly string[]).includes(value)) {
    return { ok: true, value: value as LeadAuthPolicy };
  }
  return {
    ok: false,
    field: "lead_auth_policy",
    message: `lead_auth_policy must be one of: ${leadAuthPolicies.join(", ")}`,
  };
}

const stripeAccountPattern = /^acct_[A-Za-z0-9]{1,64}$/;

export function checkStripeAccountId(value: unknown): FieldCheck<string | null> {
  if (value === null) return { ok: true, value: null };
  if (typeof value === "string" && stripeAccountPattern.test(value)) return { ok: true, value };
  return {
    ok: false,
    field: "stripe_account_id",
    message: "stripe_account_id must be a connected account id such as acct_1A2b3C, or null to disconnect",
  };
}

/** The fraud switches: JSON booleans only (no "true" strings or 0/1), so a typo cannot turn one on. */
function checkSwitch(value: unknown, field: SettingField): FieldCheck<boolean> {
  if (typeof value === "boolean") return { ok: true, value };
  return { ok: false, field, message: `${field} must be true or false` };
}

const productIdPattern = /^[\x21-\x7e]{1,255}$/;

function checkCommissionRules(value: unknown): FieldCheck<CommissionRuleSetting[]> {
  const field = "commission_rules";
  if (!Array.isArray(value) || value.length > MAX_COMMISSION_RULES) {
    return {
      ok: false,
      field,
      message: `commission_rules must be a list of at most ${MAX_COMMISSION_RULES} rules`,
    };
  }
  const rules: CommissionRuleSetting[] = [];
  for (const [index, item] of value.entries()) {
    const at = `commission_rules[${index}]`;
    if (!item || typeof item !== "object" || Array.isArray(item)) {
      return { ok: false, field, message: `${at} must be an object` };
    }
    const rule = item as Record<string, unknown>;
    const unknown = Object.keys(rule).find(
      (key) => !["product_id", "commission_type", "commission_rate", "duration_months"].includes(key),
    );
    if (unknown) return { ok: false, field, message: `${at}.${unknown} is not a rule field` };
    const productId = rule.product_id;
    if (
      typeof productId !== "string" ||
      !productIdPattern.test(productId) ||
      hasControlCharacter(productId)
    ) {
      return {
        ok: false,
        field,
        message: `${at}.product_id must be a string of 1 to 255 visible characters`,
      };
    }
    if (rules.some((r) => r.productId === productId)) {
      return { ok: false, field, message: `${at}.product_id repeats an earlier rule` };
    }
    const type = checkCommissionType(rule.commission_type);
    if (!type.ok) return { ok: false, field, message: `${at}.${type.message}` };
    const rate = checkCommissionRate(rule.commission_rate, type.value);
    if (!rate.ok) return { ok: false, field, message: `${at}.${rate.message}` };
    let durationMonths: number | null = null;
    if (rule.duration_months !== undefined && rule.duration_months !== null) {
      const duration = checkDurationMonths(rule.duration_months);
      if (!duration.ok) return { ok: false, field, message: `${at}.${duration.message}` };
      durationMonths = duration.value;
    }
    rules.push({ productId, commissionType: type.value, commissionRate: rate.value, durationMonths });
  }
  return { ok: true, value: rules };
}

/**
 * Pure: the current settings and a PATCH body -> the settings to store and what changed (field -> from,
 * to), or the first field that breaks a rule. Fields are checked in `settingFields` order. The rate is
 * checked against the type the program will have (the new one when the body changes it), so turning a
 * fixed 500 into a percent type without a new rate is refused on `commission_rate`.
 */
export function decideSettingsChange(
  current: ProgramSettings,
  body: Record<string, unknown>,
): SettingsDecision {
  const keys = Object.keys(body);
  const unknown = keys.find((key) => !(settingFields as readonly string[]).includes(key));
  if (unknown !== undefined) {
    return fail(unknown, `Unknown setting: ${unknown.slice(0, 64)}. Valid: ${settingFields.join(", ")}`);
  }
  if (keys.length === 0) return fail("body", NO_SETTINGS_MESSAGE);
  const next: ProgramSettings = { ...current };
  const has = (field: SettingField) => Object.hasOwn(body, field);

  if (has("name")) {
    const name = checkName(body.name);
    if (!name.ok) return name;
    next.name = name.value;
  }
  if (has("domain")) {
    const domain = checkDomain(body.domain);
    if (!domain.ok) return domain;
    next.domain = domain.value;
  }
  if (has("attribution_window_days")) {
    const window = checkWindowDays(body.attribution_window_days, "attribution_window_days");
    if (!window.ok) return window;
    next.attributionWindowDays = window.value;
  }
  if (has("lead_auth_policy")) {
    const policy = checkLeadAuthPolicy(body.lead_auth_policy);
    if (!policy.ok) return policy;
    next.leadAuthPolicy = policy.value;
  }
  if (has("allowed_origins")) {
    const origins = checkAllowedOrigins(body.allowed_origins);
    if (!origins.ok) return origins;
    next.allowedOrigins = origins.value;
  }
  if (has("commission_type")) {
    const type = checkCommissionType(body.commission_type);
    if (!type.ok) return type;
    next.commissionType = type.value;
  }
  if (has("commission_rate") || next.commissionType !== current.commissionType) {
    const rate = checkCommissionRate(
      has("commission_rate") ? body.commission_rate : Number(current.commissionRate),
      next.commissionType,
    );
    if (!rate.ok) return rate;
    next.commissionRate = rate.value;
  }
  if (has("duration_months")) {
    const duration = checkDurationMonths(body.duration_months);
    if (!duration.ok) return duration;
    next.durationMonths = duration.value;
  }
  if (has("hold_days")) {
    const hold = checkHoldDays(body.hold_days);
    if (!hold.ok) return hold;
    next.holdDays = hold.value;
  }
  if (has("commission_rules")) {
    const rules = checkCommissionRules(body.commission_rules);
    if (!rules.ok) return rules;
    next.commissionRules = rules.value;
  }
  if (has("stripe_account_id")) {
    const account = checkStripeAccountId(body.stripe_account_id);
    if (!account.ok) return account;
    next.stripeAccountId = account.value;
  }
  if (has("hold_flagged_commissions")) {
    const hold = checkSwitch(body.hold_flagged_commissions, "hold_flagged_commissions");
    if (!hold.ok) return hold;
    next.holdFlaggedCommissions = hold.value;
  }
  if (has("email_attribution_settled_leads_only")) {
    const settledOnly = checkSwitch(
      body.email_attribution_settled_leads_only,
      "email_attribution_settled_leads_only",
    );
    if (!settledOnly.ok) return settledOnly;
    next.emailAttributionSettledLeadsOnly = settledOnly.value;
  }
  return { ok: true, next, changes: diffSettings(current, next) };
}

const fieldOf: Record<SettingField, keyof ProgramSettings> = {
  name: "name",
  domain: "domain",
  attribution_window_days: "attributionWindowDays",
  lead_auth_policy: "leadAuthPolicy",
  allowed_origins: "allowedOrigins",
  commission_type: "commissionType",
  commission_rate: "commissionRate",
  duration_months: "durationMonths",
  hold_days: "holdDays",
  commission_rules: "commissionRules",
  stripe_account_id: "stripeAccountId",
  hold_flagged_commissions: "holdFlaggedCommissions",
  email_attribution_settled_leads_only: "emailAttributionSettledLeadsOnly",
};

/** What the audit log records: each changed field's old and new value, in the API's own shape. */
export function diffSettings(current: ProgramSettings, next: ProgramSettings): SettingChanges {
  const changes: SettingChanges = {};
  for (const field of settingFields) {
    const from = auditValue(field, current[fieldOf[field]]);
    const to = auditValue(field, next[fieldOf[field]]);
    if (JSON.stringify(from) !== JSON.stringify(to)) changes[field] = { from, to };
  }
  return changes;
}

function auditValue(field: SettingField, value: unknown): unknown {
  if (field === "commission_rate") return Number(value);
  if (field === "commission_rules") {
    return (value as CommissionRuleSetting[]).map((rule) => ({
      product_id: rule.productId,
      commission_type: rule.commissionType,
      commission_rate: Number(rule.commissionRate),
      duration_months: rule.durationMonths,
    }));
  }
  return value;
}
