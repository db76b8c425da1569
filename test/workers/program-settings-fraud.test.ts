import { and, desc, eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { auditLog, programs } from "../../schema/index.ts";
import { call } from "./dashboard-sign-in.ts";
import { db } from "./harness.ts";
import { ownerWithProgram, platform } from "./program-admin-harness.ts";

const settingsPath = (id: number) => `/api/v1/programs/${id}/settings`;

async function auditOf(programId: number) {
  return db
    .select()
    .from(auditLog)
    .where(and(eq(auditLog.programId, programId), eq(auditLog.action, "program.settings_changed")))
    .orderBy(desc(auditLog.id));
}

async function storedSwitches(programId: number) {
  const [row] = await db
    .select({
      hold: programs.holdFlaggedCommissions,
      settledOnly: programs.emailAttributionSettledOnly,
    })
    .from(programs)
    .where(eq(programs.id, programId));
  return row;
}

describe("fraud settings on /api/v1/programs/:id/settings", () => {
  it("a new program shows both off, in the fields and in the summary lines", async () => {
    const owner = await ownerWithProgram();
    const response = await call("GET", settingsPath(owner.programId), { token: owner.token });
    expect(response.status).toBe(200);
    expect(response.body.data.settings).toMatchObject({
      hold_flagged_commissions: false,
      email_attribution_settled_leads_only: false,
    });
    expect(response.body.data.summary).toContain(
      "Flagged commissions: approved when their hold ends (flags are only shown)",
    );
    expect(response.body.data.summary).toContain(
      "Payments found by email: attributed to settled or provisional leads",
    );
  });

  it("says holding needs a hold period: with 0 days none is held, with 1 or more flagged ones are", async () => {
    const owner = await ownerWithProgram();
    const zero = await call("PATCH", settingsPath(owner.programId), {
      token: owner.token,
      body: { hold_flagged_commissions: true, hold_days: 0 },
    });
    expect(zero.body.data.summary).toContain(
      "Flagged commissions: held for review when their hold ends; with a hold period of 0 days none is held (approved with the sale, before the fraud scan): set hold_days to 1 or more",
    );
    const held = await call("PATCH", settingsPath(owner.programId), {
      token: owner.token,
      body: { hold_days: 1 },
    });
    expect(held.body.data.summary).toContain("Flagged commissions: held for review when their hold ends");
  });

  it("turns each on and off, stores it on the program and audits who changed it from what to what", async () => {
    const owner = await ownerWithProgram();
    const on = await call("PATCH", settingsPath(owner.programId), {
      token: owner.token,
      body: { hold_flagged_commissions: true, email_attribution_settled_leads_only: true },
    });
    expect(on.status).toBe(200);
    expect(on.body.data.changed).toEqual([
      "hold_flagged_commissions",
      "email_attribution_settled_leads_only",
    ]);
    expect(on.body.data.settings).toMatchObject({
      hold_flagged_commissions: true,
      email_attribution_settled_leads_only: true,
    });
    expect(on.body.data.summary).toContain(
      "Flagged commissions: held for review when their hold ends; with a hold period of 0 days none is held (approved with the sale, before the fraud scan): set hold_days to 1 or more",
    );
    expect(on.body.data.summary).toContain("Payments found by email: attributed to settled leads only");
    expect(await storedSwitches(owner.programId)).toEqual({ hold: true, settledOnly: true });
    const [entry] = await auditOf(owner.programId);
    expect(entry?.actorUserId).toBe(owner.userId);
    expect(entry?.changes).toEqual({
      hold_flagged_commissions: { from: false, to: true },
      email_attribution_settled_leads_only: { from: false, to: true },
    });

    const read = await call("GET", settingsPath(owner.programId), { token: owner.token });
    expect(read.body.data.settings).toEqual(on.body.data.settings);

    // One switch back off: only that one changes, and only it is audited.
    const off = await call("PATCH", settingsPath(owner.programId), {
      token: owner.token,
      body: { email_attribution_settled_leads_only: false, hold_flagged_commissions: true },
    });
    expect(off.status).toBe(200);
    expect(off.body.data.changed).toEqual(["email_attribution_settled_leads_only"]);
    expect(await storedSwitches(owner.programId)).toEqual({ hold: true, settledOnly: false });
    const [latest] = await auditOf(owner.programId);
    expect(latest?.changes).toEqual({ email_attribution_settled_leads_only: { from: true, to: false } });
    expect(await auditOf(owner.programId)).toHaveLength(2);
  });

  it("a body that sets a switch to its current value changes nothing and audits nothing", async () => {
    const owner = await ownerWithProgram();
    const same = await call("PATCH", settingsPath(owner.programId), {
      token: owner.token,
      body: { hold_flagged_commissions: false },
    });
    expect(same.status).toBe(200);
    expect(same.body.data.changed).toEqual([]);
    expect(await auditOf(owner.programId)).toEqual([]);
  });

  const invalid: [string, Record<string, unknown>, string][] = [
    [
      "hold as a string",
      { hold_flagged_commissions: "true" },
      "hold_flagged_commissions must be true or false",
    ],
    ["hold as a number", { hold_flagged_commissions: 1 }, "hold_flagged_commissions must be true or false"],
    ["hold null", { hold_flagged_commissions: null }, "hold_flagged_commissions must be true or false"],
    [
      "settled-only as a string",
      { email_attribution_settled_leads_only: "yes" },
      "email_attribution_settled_leads_only must be true or false",
    ],
    [
      "settled-only as a list",
      { email_attribution_settled_leads_only: [true] },
      "email_attribution_settled_leads_only must be true or false",
    ],
    [
      "a good switch beside a bad one: nothing is applied",
      { hold_flagged_commissions: true, email_attribution_settled_leads_only: 0 },
      "email_attribution_settled_leads_only must be true or false",
    ],
    [
      "the column's own name is not a setting",
      { email_attribution_settled_only: true },
      "Unknown setting: email_attribution_settled_only. Valid: name, domain, attribution_window_days, lead_auth_policy, allowed_origins, commission_type, commission_rate, duration_months, hold_days, commission_rules, stripe_account_id, hold_flagged_commissions, email_attribution_settled_leads_only",
    ],
  ];
  it.each(invalid)("400 naming the field: %s", async (_, body, message) => {
    const owner = await ownerWithProgram();
    const response = await call("PATCH", settingsPath(owner.programId), { token: owner.token, body });
    expect(response.status).toBe(400);
    expect(response.body).toEqual(platform(400, message));
    expect(await storedSwitches(owner.programId)).toEqual({ hold: false, settledOnly: false });
    expect(await auditOf(owner.programId)).toEqual([]);
  });
});
