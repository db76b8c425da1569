import { describe, expect, it } from "vitest";
import { checkNewProgram } from "../../lib/programs/program-rules.ts";

const valid = { name: "Acme", domain: "acme.example", commission_type: "percent", commission_rate: 20 };

describe("program rules (the command-line init table, exactly)", () => {
  it.each([
    [
      "name missing",
      { ...valid, name: undefined },
      "Missing required fields: name, domain, commission_type, commission_rate",
    ],
    [
      "domain empty",
      { ...valid, domain: "" },
      "Missing required fields: name, domain, commission_type, commission_rate",
    ],
    [
      "rate missing",
      { ...valid, commission_rate: undefined },
      "Missing required fields: name, domain, commission_type, commission_rate",
    ],
    [
      "unknown type",
      { ...valid, commission_type: "bounty" },
      "Invalid commission_type: bounty. Valid: percent, fixed, recurring_percent, recurring_fixed",
    ],
    ["rate as a string", { ...valid, commission_rate: "20" }, "commission_rate must be a positive number"],
    ["rate zero", { ...valid, commission_rate: 0 }, "commission_rate must be a positive number"],
    ["rate negative", { ...valid, commission_rate: -5 }, "commission_rate must be a positive number"],
    [
      "percent above 100",
      { ...valid, commission_rate: 100.5 },
      "commission_rate is a percentage for this type and cannot exceed 100",
    ],
    [
      "recurring percent above 100",
      { ...valid, commission_type: "recurring_percent", commission_rate: 101 },
      "commission_rate is a percentage for this type and cannot exceed 100",
    ],
    [
      "fractional months",
      { ...valid, duration_months: 1.5 },
      "duration_months must be a whole number of months (0 = lifetime)",
    ],
    [
      "negative months",
      { ...valid, duration_months: -1 },
      "duration_months must be a whole number of months (0 = lifetime)",
    ],
    [
      "months beyond a hundred years",
      { ...valid, duration_months: 1201 },
      "duration_months must be at most 1200 (0 = lifetime)",
    ],
    [
      "rate below what four decimal places keep",
      { ...valid, commission_rate: 0.00004 },
      "commission_rate must be at least 0.0001 (rates keep 4 decimal places)",
    ],
    [
      "fixed rate of eleven integer digits",
      { ...valid, commission_type: "fixed", commission_rate: 1e10 },
      "commission_rate must be less than 10000000000",
    ],
    [
      "cookie 0",
      { ...valid, cookie_duration: 0 },
      "cookie_duration must be a whole number of days from 1 to 365",
    ],
    [
      "cookie 366",
      { ...valid, cookie_duration: 366 },
      "cookie_duration must be a whole number of days from 1 to 365",
    ],
    [
      "cookie as a string",
      { ...valid, cookie_duration: "30" },
      "cookie_duration must be a whole number of days from 1 to 365",
    ],
    [
      "domain not a host",
      { ...valid, domain: "not a host" },
      "domain must be a host name such as shop.example.com",
    ],
    [
      "name too long",
      { ...valid, name: "x".repeat(201) },
      "name must be a non-empty string of at most 200 characters",
    ],
  ])("%s", (_case, body, message) => {
    const result = checkNewProgram(body as Record<string, unknown>);
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.message).toBe(message);
  });

  it("accepts a fixed rate above 100 and fills the defaults", () => {
    expect(checkNewProgram({ ...valid, commission_type: "fixed", commission_rate: 150 })).toEqual({
      ok: true,
      value: {
        name: "Acme",
        domain: "acme.example",
        commissionType: "fixed",
        commissionRate: "150",
        durationMonths: 0,
        attributionWindowDays: 60,
      },
    });
  });

  it("keeps any positive rate the column holds, rounded to four decimal places", () => {
    const rateOf = (body: Record<string, unknown>) => {
      const result = checkNewProgram({ ...valid, ...body });
      return result.ok ? result.value.commissionRate : result.message;
    };
    expect(rateOf({ commission_type: "fixed", commission_rate: 5_000_000 })).toBe("5000000");
    expect(rateOf({ commission_type: "recurring_fixed", commission_rate: 9_999_999_999.9999 })).toBe(
      "9999999999.9999",
    );
    expect(rateOf({ commission_rate: 1.123456 })).toBe("1.1235");
    expect(rateOf({ commission_rate: 0.00005 })).toBe("0.0001");
    expect(rateOf({ commission_rate: 0.0001 })).toBe("0.0001");
    expect(rateOf({ commission_rate: 100 })).toBe("100");
    expect(checkNewProgram({ ...valid, duration_months: 1200 })).toMatchObject({
      ok: true,
      value: { durationMonths: 1200 },
    });
  });

  it("counts null optional fields as not sent: their defaults apply", () => {
    expect(
      checkNewProgram({ ...valid, commission_type: "fixed", duration_months: null, cookie_duration: null }),
    ).toMatchObject({ ok: true, value: { durationMonths: 0, attributionWindowDays: 60 } });
  });

  it("reduces a URL to its host and keeps the given window", () => {
    const result = checkNewProgram({
      ...valid,
      domain: "https://Shop.Acme.example/pricing",
      cookie_duration: 30,
    });
    expect(result).toMatchObject({
      ok: true,
      value: { domain: "shop.acme.example", attributionWindowDays: 30 },
    });
  });
});
