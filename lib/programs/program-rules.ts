import { type CommissionType, commissionTypes } from "../../schema/programs.ts";
import { echoedValue } from "../errors/echoed-value.ts";
import { hasControlCharacter } from "../validation/storable-text.ts";

/**
 * The rules of a program's fields, shared by program creation (the command-line `init`) and the settings
 * route. Pure: each check returns the value to store or the field and message to answer with. The init
 * messages are the spec's (section 7's init table), to the character; settings reuse them.
 */
export type FieldCheck<T> = { ok: true; value: T } | { ok: false; field: string; message: string };

export const MISSING_INIT_FIELDS_MESSAGE =
  "Missing required fields: name, domain, commission_type, commission_rate";
export const MAX_NAME_LENGTH = 200;
/** `numeric(14, 4)`: below 10^10, kept to four decimal places. */
const COMMISSION_RATE_LIMIT = 10_000_000_000;
const COMMISSION_RATE_PLACES = 4;
/** A recurring commission's months: a hundred years (longer is what 0, lifetime, says). */
export const MAX_DURATION_MONTHS = 1200;

const percentTypes: readonly CommissionType[] = ["percent", "recurring_percent"];

function fail<T>(field: string, message: string): FieldCheck<T> {
  return { ok: false, field, message };
}

export function checkName(value: unknown): FieldCheck<string> {
  if (
    typeof value !== "string" ||
    value.trim() === "" ||
    value.trim().length > MAX_NAME_LENGTH ||
    hasControlCharacter(value)
  ) {
    return fail("name", `name must be a non-empty string of at most ${MAX_NAME_LENGTH} characters`);
  }
  return { ok: true, value: value.trim() };
}

const hostLabel = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/;

/** A host name (`shop.example.com`); a full URL is accepted and reduced to its host. */
export function checkDomain(value: unknown): FieldCheck<string> {
  const message = "domain must be a host name such as shop.example.com";
  if (typeof value !== "string" || value.trim() === "" || value.length > 253 || hasControlCharacter(value)) {
    return fail("domain", message);
  }
  let host = value.trim().toLowerCase();
  if (/^https?:\/\//.test(host)) {
    try {
      host = new URL(host).hostname;
    } catch {
      return fail("domain", message);
    }
  }
  const labels = host.split(".");
  if (labels.length < 2 && host !== "localhost") return fail("domain", message);
  if (!labels.every((label) => hostLabel.test(label))) return fail("domain", message);
  return { ok: true, value: host };
}

export function checkCommissionType(value: unknown): FieldCheck<CommissionType> {
  if (typeof value === "string" && (commissionTypes as readonly string[]).includes(value)) {
    return { ok: true, value: value as CommissionType };
  }
  return fail(
    "commission_type",
    `Invalid commission_type: ${echoedValue(value)}. Valid: ${commissionTypes.join(", ")}`,
  );
}

/**
 * The rate as the database stores it (`numeric(14, 4)`, a decimal string): rounded to four decimal places
 * (the answer shows the stored rate). Beyond the spec's two messages, what the column cannot hold says so:
 * a rate that rounds to 0, or one of ten integer digits or more (only a fixed commission can be that large).
 */
export function checkCommissionRate(value: unknown, type: CommissionType): FieldCheck<string> {
  if (typeof value !== "number" || !Number.isFinite(value) || value <= 0) {
    return fail("commission_rate", "commission_rate must be a positive number");
  }
  if (percentTypes.includes(type) && value > 100) {
    return fail("commission_rate", "commission_rate is a percentage for this type and cannot exceed 100");
  }
  const scale = 10 ** COMMISSION_RATE_PLACES;
  const rounded = Math.round(value * scale) / scale;
  if (rounded <= 0) {
    return fail(
      "commission_rate",
      `commission_rate must be at least ${1 / scale} (rates keep ${COMMISSION_RATE_PLACES} decimal places)`,
    );
  }
  if (rounded >= COMMISSION_RATE_LIMIT) {
    return fail("commission_rate", `commission_rate must be less than ${COMMISSION_RATE_LIMIT}`);
  }
  return { ok: true, value: String(rounded) };
}

export function checkDurationMonths(value: unknown): FieldCheck<number> {
  if (typeof value !== "number" || !Number.isInteger(value) || value < 0) {
    return fail("duration_months", "duration_months must be a whole number of months (0 = lifetime)");
  }
  if (value > MAX_DURATION_MONTHS) {
    return fail("duration_months", `duration_months must be at most ${MAX_DURATION_MONTHS} (0 = lifetime)`);
  }
  return { ok: true, value };
}

/** The attribution window; `init` calls it `cookie_duration`, settings `attribution_window_days`. */
export function checkWindowDays(
  value: unknown,
  field: "cookie_duration" | "attribution_window_days",
): FieldCheck<number> {
  if (typeof value !== "number" || !Number.isInteger(value) || value < 1 || value > 365) {
    return fail(field, `${field} must be a whole number of days from 1 to 365`);
  }
  return { ok: true, value };
}

export interface NewProgramFields {
  name: string;
  domain: string;
  commissionType: CommissionType;
  commissionRate: string;
  durationMonths: number;
  attributionWindowDays: number;
}

/**
 * The command-line `init` body, checked in the spec's order: the four required fields (one message for
 * any missing), then the type, the rate, the duration, the cookie duration. The first failure wins.
 */
export function checkNewProgram(body: Record<string, unknown>): FieldCheck<NewProgramFields> {
  const required = ["name", "domain", "commission_type", "commission_rate"] as const;
  if (required.some((field) => body[field] === undefined || body[field] === null || body[field] === "")) {
    return fail(
      required.find((field) => body[field] === undefined || body[field] === null || body[field] === "") ??
        "name",
      MISSING_INIT_FIELDS_MESSAGE,
    );
  }
  const type = checkCommissionType(body.commission_type);
  if (!type.ok) return type;
  const rate = checkCommissionRate(body.commission_rate, type.value);
  if (!rate.ok) return rate;
  // The optional fields, like the required ones, count null as not sent: their defaults apply.
  const duration = absent(body.duration_months) ? ok(0) : checkDurationMonths(body.duration_months);
  if (!duration.ok) return duration;
  const window = absent(body.cookie_duration)
    ? ok(60)
    : checkWindowDays(body.cookie_duration, "cookie_duration");
  if (!window.ok) return window;
  const name = checkName(body.name);
  if (!name.ok) return name;
  const domain = checkDomain(body.domain);
  if (!domain.ok) return domain;
  return {
    ok: true,
    value: {
      name: name.value,
      domain: domain.value,
      commissionType: type.value,
      commissionRate: rate.value,
      durationMonths: duration.value,
      attributionWindowDays: window.value,
    },
  };
}

function absent(value: unknown): boolean {
  return value === undefined || value === null;
}

function ok<T>(value: T): FieldCheck<T> {
  return { ok: true, value };
}
