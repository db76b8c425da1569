import { SELF } from "cloudflare:test";
import { eq, sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { commissions, leadEvents, programs, saleEvents } from "../../schema/index.ts";
import {
  BASE,
  call,
  type LooseJson,
  type Person,
  programOf,
  signInPerson,
} from "./dashboard-tracking-helpers.ts";
import { db, freshIp, type ProgramFixture, postJson, unique } from "./harness.ts";
import { refund } from "./refund-harness.ts";
import { click, sale } from "./sale-harness.ts";

/**
 * Where fraud flags are shown (issue 16): the events feed, readiness (informational, never a check) and the
 * dashboard page. The flags are set with SQL here: finding them is the signals' job, not the surfaces'.
 */
async function signedInWithFunnel(): Promise<{ person: Person; p: ProgramFixture; transactionId: string }> {
  const person = await signInPerson();
  const p = await programOf(person);
  const clickId = await click(p, p.links[0]);
  const customerKey = unique("customer");
  const led = await postJson(
    "/api/v1/track/lead",
    { click_id: clickId, customer_key: customerKey },
    { Authorization: `Bearer ${p.apiKey}` },
  );
  expect(led.status).toBe(200);
  const transactionId = unique("txn");
  const sold = await sale(p, {
    transaction_id: transactionId,
    amount_cents: 5000,
    customer_key: customerKey,
  });
  expect(sold.status).toBe(200);
  const refunded = await refund(p, { transaction_id: transactionId, refund_amount_cents: 1000 });
  expect(refunded.status).toBe(200);
  return { person, p, transactionId };
}

async function flag(programId: number): Promise<void> {
  await db
    .update(leadEvents)
    .set({ fraudFlags: ["partner_device", "lead_steering"] })
    .where(eq(leadEvents.programId, programId));
  await db
    .update(saleEvents)
    .set({ fraudFlags: ["self_referral"] })
    .where(eq(saleEvents.programId, programId));
  await db
    .update(commissions)
    .set({ fraudFlags: ["self_referral", "fast_conversion"] })
    .where(eq(commissions.programId, programId));
}

const events = async (person: Person, programId: number) => {
  const response = await call("GET", `/api/tracking/events/${programId}`, { token: person.token });
  expect(response.status).toBe(200);
  return response.body.data.events as LooseJson[];
};

describe("fraud flags in GET /api/tracking/events/:programId", () => {
  it("an unflagged program: empty lists on every event, and null commission flags beside non-sales", async () => {
    const { person, p } = await signedInWithFunnel();
    const feed = await events(person, p.programId);
    expect(feed.map((e) => [e.kind, e.fraud_flags, e.commission_fraud_flags])).toEqual([
      ["refund", [], null],
      ["sale", [], []],
      ["lead", [], null],
      ["click", [], null],
    ]);
  });

  it("the lead's and the sale's own flags, and the sale's commission's flags", async () => {
    const { person, p } = await signedInWithFunnel();
    await flag(p.programId);
    const [refunded, sold, led, clicked] = await events(person, p.programId);
    expect(led).toMatchObject({ kind: "lead", fraud_flags: ["partner_device", "lead_steering"] });
    expect(sold).toMatchObject({
      kind: "sale",
      fraud_flags: ["self_referral"],
      commission_fraud_flags: ["self_referral", "fast_conversion"],
    });
    expect(clicked).toMatchObject({ kind: "click", fraud_flags: [], commission_fraud_flags: null });
    expect(refunded).toMatchObject({ kind: "refund", fraud_flags: [], commission_fraud_flags: null });
  });
});

async function readiness(person: Person, programId: number) {
  const response = await call("GET", `/api/tracking/readiness/${programId}`, { token: person.token });
  expect(response.status).toBe(200);
  return response.body as LooseJson;
}

describe("fraud flags in readiness (informational)", () => {
  it("counts flagged live rows and the codes seen, and changes no check, count or verdict", async () => {
    const { person, p } = await signedInWithFunnel();
    const before = await readiness(person, p.programId);
    expect(before.fraud).toEqual({
      flagged: { leads: 0, sales: 0, commissions: 0 },
      codes: [],
      hold_flagged_commissions: false,
      hold_days: 0,
      email_attribution_settled_leads_only: false,
      message: "No fraud signals among the newest live events.",
    });

    await flag(p.programId);
    await db
      .update(programs)
      .set({ holdFlaggedCommissions: true, holdDays: 7 })
      .where(eq(programs.id, p.programId));
    const after = await readiness(person, p.programId);
    expect(after.fraud).toEqual({
      flagged: { leads: 1, sales: 1, commissions: 1 },
      codes: ["fast_conversion", "lead_steering", "partner_device", "self_referral"],
      hold_flagged_commissions: true,
      hold_days: 7,
      email_attribution_settled_leads_only: false,
      message:
        "Fraud signals among the newest live events: 1 lead, 1 sale, 1 commission (fast_conversion, " +
        "lead_steering, partner_device, self_referral). Flagged commissions are held for review when their hold ends.",
    });
    const { checked_at: _a, fraud: _f, ...verdictBefore } = before;
    const { checked_at: _b, fraud: _g, ...verdictAfter } = after;
    expect(verdictAfter).toEqual(verdictBefore);

    // The program key's readiness route answers the same section.
    const keyed = await call("GET", "/api/v1/programs/me/readiness", { token: p.apiKey });
    expect(keyed.body.fraud).toEqual(after.fraud);
  });

  it.each([
    [
      true,
      0,
      "Flagged commissions are not held: with a hold period of 0 days a commission is approved with its sale, " +
        "before the fraud scan; set hold_days to 1 or more to hold them for review.",
    ],
    [
      false,
      7,
      "Flagged commissions are approved when their hold ends; set hold_flagged_commissions to hold them for review.",
    ],
    [
      false,
      0,
      "Flagged commissions are not held: with a hold period of 0 days a commission is approved with its sale, " +
        "before the fraud scan; set hold_flagged_commissions, and hold_days to 1 or more, to hold them for review.",
    ],
  ])(
    "with hold_flagged_commissions %s and a %i-day hold, says what happens to a flagged commission",
    async (hold, days, says) => {
      const { person, p } = await signedInWithFunnel();
      await flag(p.programId);
      await db
        .update(programs)
        .set({ holdFlaggedCommissions: hold, holdDays: days })
        .where(eq(programs.id, p.programId));
      const verdict = await readiness(person, p.programId);
      expect(verdict.fraud).toMatchObject({ hold_flagged_commissions: hold, hold_days: days });
      expect(verdict.fraud.message).toBe(
        "Fraud signals among the newest live events: 1 lead, 1 sale, 1 commission (fast_conversion, " +
          `lead_steering, partner_device, self_referral). ${says}`,
      );
    },
  );

  it("flags on test events are not counted", async () => {
    const { person, p } = await signedInWithFunnel();
    const testSale = await sale(p, { transaction_id: unique("txn"), amount_cents: 100 }, p.testApiKey);
    expect(testSale.status).toBe(200);
    await db.execute(sql`update affiliate_sale_events set fraud_flags = '{ip_velocity}'
                         where program_id = ${p.programId} and is_test`);
    const verdict = await readiness(person, p.programId);
    expect(verdict.fraud.flagged).toEqual({ leads: 0, sales: 0, commissions: 0 });
    expect(verdict.fraud.codes).toEqual([]);
    expect(verdict.fraud.message).toBe("No fraud signals among the newest live events.");
  });
});

async function dashboardPage(person: Person, programId: number): Promise<string> {
  const response = await SELF.fetch(`${BASE}/dashboard?program=${programId}`, {
    headers: { "CF-Connecting-IP": freshIp(), Cookie: `__Host-affiliate_session=${person.token}` },
    redirect: "manual",
  });
  expect(response.status).toBe(200);
  return response.text();
}

describe("fraud flags and settings on the dashboard page", () => {
  it("marks flagged events, shows the counts, and the fraud settings as they are stored", async () => {
    const { person, p } = await signedInWithFunnel();
    const clean = await dashboardPage(person, p.programId);
    expect(clean).not.toContain('data-flagged="true"');
    expect(clean).toContain('id="fraud-signals" data-flagged="0"');
    expect(clean).toContain("No fraud signals among the newest live events.");
    expect(clean).toMatch(/<input type="checkbox" name="hold_flagged_commissions"\s*\/?>/);

    await flag(p.programId);
    await db
      .update(programs)
      .set({ holdFlaggedCommissions: true, emailAttributionSettledOnly: true })
      .where(eq(programs.id, p.programId));
    const html = await dashboardPage(person, p.programId);
    expect(html.match(/data-flagged="true"/g)).toHaveLength(2);
    expect(html).toContain("flagged: partner_device, lead_steering");
    expect(html).toContain("flagged: self_referral, fast_conversion");
    expect(html).toContain('id="fraud-signals" data-flagged="3"');
    expect(html).toContain('<dd data-role="flagged-commissions">1</dd>');
    expect(html).toMatch(/<input type="checkbox" name="hold_flagged_commissions" checked=""\s*\/?>/);
    expect(html).toMatch(
      /<input type="checkbox" name="email_attribution_settled_leads_only" checked=""\s*\/?>/,
    );
    expect(html).toContain("Flagged commissions: held for review when their hold ends");
  });
});
