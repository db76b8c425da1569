/**
 * The lead the database decides and writes at once (`lib/tracking/lead/lead-at-once.ts`) against the lead read,
 * decided in TypeScript and written the usual way: the same lead on twin programs (same policy, clicks and
 * customers, the same clock) must decide the same and leave the same rows, on every rule the database applies
 * and on those it leaves to TypeScript; and the database must decide the common lead in one round trip.
 */
import { eq, sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { sha256Hex } from "../../lib/auth/api-keys.ts";
import { parseBearer } from "../../lib/auth/bearer.ts";
import type { DeviceHashes } from "../../lib/fraud/device-hash.ts";
import { createLogger } from "../../lib/log.ts";
import { storedEmail } from "../../lib/tracking/email.ts";
import { decideLead, type LeadDecision, type LeadIntent } from "../../lib/tracking/lead/decide-lead.ts";
import { leadAtOnceSent, leadAtOnceValues, leadDecidedAtOnce } from "../../lib/tracking/lead/lead-at-once.ts";
import { readLeadFacts, writeLead } from "../../lib/tracking/lead/lead-store.ts";
import type { LeadAuthPolicy } from "../../schema/index.ts";
import { clickEvents, customers, programApiKeys } from "../../schema/index.ts";
import { createProgram, db, type ProgramFixture, postJson } from "./harness.ts";
import { customersOfProgram, leadEventsOfProgram, leadPath, recordClick } from "./lead-helpers.ts";
import { countDatabaseRoundTrips } from "./round-trip-counter.ts";
import { endpointFor, eventsOf } from "./webhook-harness.ts";

const roundTripsOf = countDatabaseRoundTrips();
const log = createLogger({ test: "lead-at-once" });
const dayMs = 86_400_000;
const browserDevice: DeviceHashes = { ipHash: "ip-hash", uaHash: "ua-hash" };

/** The lead as the route would shape it: its key (or none: the browser), its click, key and the rest. */
interface LeadSent {
  /** The program's live or test key, none (the browser), an empty Bearer, or this token. */
  key: "live" | "test" | "none" | "empty" | { token: string };
  clickId?: string;
  customerKey?: string;
  email?: string;
  eventName?: string;
  /** The top-level `program_id` (read in browser mode). */
  programId?: "own" | "other";
  /** `additional_data.program_id` (read to name the programs, in live mode). */
  eventProgramId?: "own" | "other";
}

interface Scenario {
  name: string;
  policy?: LeadAuthPolicy;
  /** What the twin programs get before the lead (the same for both); returns the lead to send. */
  setup: (p: ProgramFixture) => Promise<LeadSent>;
  /** Run just before the lead, with its clock (a key's rotation deadline at that instant). */
  atNow?: (p: ProgramFixture, now: Date) => Promise<void>;
  /** Round trips of the lead the database may decide: 1 when it does or refuses, 2 when it leaves a write. */
  roundTrips: 1 | 2;
}

const serverLead = async (p: ProgramFixture): Promise<LeadSent> => ({
  key: "live",
  clickId: await recordClick(p.links[0]),
  customerKey: "cus_signup",
  email: "Buyer@Example.com",
  eventName: "signup",
});

/** A customer row of the program's click, `clicked` unless told (as a checkout before any signup leaves it). */
async function clickedCustomer(
  p: ProgramFixture,
  clickId: string,
  customerKey: string | null = null,
  status: "clicked" | "converted" = "clicked",
) {
  await db.insert(customers).values({
    programId: p.programId,
    partnerId: p.partnerIds[1],
    clickId,
    clickedAt: new Date(),
    customerKey,
    status,
  });
}

/** The program's live key's rotation deadline `deltaSql` after the lead's clock (SQL, for sub-millisecond). */
const rotateByAt = (deltaSql: string) => async (p: ProgramFixture, now: Date) => {
  await db.execute(
    sql`update program_api_keys set rotation_marked_at = ${now.toISOString()}::timestamptz - interval '1 day',
          rotate_by = ${now.toISOString()}::timestamptz + ${deltaSql}::interval
        where program_id = ${p.programId} and not is_test`,
  );
};

const scenarios: Scenario[] = [
  { name: "a server lead, a new customer from its click", setup: serverLead, roundTrips: 1 },
  {
    name: "a server lead on a visitor's second click (the original click's partner)",
    setup: async (p) => {
      const first = await recordClick(p.links[0]);
      return { key: "live", clickId: await recordClick(p.links[1], { visitorClickId: first }) };
    },
    roundTrips: 1,
  },
  {
    name: "a server lead settling the click's provisional browser leads",
    setup: async (p) => {
      const clickId = await recordClick(p.links[0]);
      for (const customerKey of ["a", "b"]) {
        expect((await postJson(leadPath, { click_id: clickId, customer_key: customerKey })).status).toBe(200);
      }
      return { key: "live", clickId, customerKey: "b" };
    },
    roundTrips: 1,
  },
  {
    name: "a server lead promoting a customer nobody has signed up (its partner kept)",
    setup: async (p) => {
      const clickId = await recordClick(p.links[0]);
      await clickedCustomer(p, clickId, "held");
      return { key: "live", clickId, customerKey: "held", email: "x@example.com" };
    },
    roundTrips: 1,
  },
  {
    name: "a browser lead under server_required (provisional, the device's hashes)",
    setup: async (p) => ({
      key: "none",
      clickId: await recordClick(p.links[0]),
      customerKey: "c",
      programId: "own",
    }),
    roundTrips: 1,
  },
  {
    name: "a browser lead under browser_allowed (settled, the device's hashes)",
    policy: "browser_allowed",
    setup: async (p) => ({ key: "none", clickId: await recordClick(p.links[1]), email: "b@example.com" }),
    roundTrips: 1,
  },
  {
    name: "a key marked for rotation (the notice is the rules')",
    setup: async (p) => {
      await db
        .update(programApiKeys)
        .set({ rotationMarkedAt: new Date(Date.now() - dayMs), rotateBy: new Date(Date.now() + 7 * dayMs) })
        .where(eq(programApiKeys.programId, p.programId));
      return serverLead(p);
    },
    roundTrips: 1,
  },
  {
    name: "a retired key (refused)",
    setup: async (p) => {
      await db
        .update(programApiKeys)
        .set({ rotationMarkedAt: new Date(Date.now() - 9 * dayMs), rotateBy: new Date(Date.now() - dayMs) })
        .where(eq(programApiKeys.programId, p.programId));
      return serverLead(p);
    },
    roundTrips: 1,
  },
  {
    name: "a customer already a lead (refused)",
    setup: async (p) => {
      const lead = await serverLead(p);
      expect(
        (await postJson(leadPath, { click_id: lead.clickId }, { Authorization: `Bearer ${p.apiKey}` }))
          .status,
      ).toBe(200);
      return lead;
    },
    roundTrips: 1,
  },
  {
    name: "a customer_key another customer holds (refused)",
    setup: async (p) => {
      await clickedCustomer(p, await recordClick(p.links[1]), "taken");
      return { key: "live", clickId: await recordClick(p.links[0]), customerKey: "taken" };
    },
    roundTrips: 1,
  },
  {
    name: "a browser lead naming another program (refused)",
    setup: async (p) => ({ key: "none", clickId: await recordClick(p.links[0]), programId: "other" }),
    roundTrips: 1,
  },
  {
    name: "a test click (refused: no live customer)",
    setup: async (p) => ({ key: "live", clickId: await recordClick(p.links[0], { testMode: true }) }),
    roundTrips: 1,
  },
  {
    name: "an unknown click (refused)",
    setup: async () => ({ key: "live", clickId: "clk_unknown" }),
    roundTrips: 1,
  },
  {
    name: "a key's rotation deadline at the lead's instant (refused: retired)",
    setup: serverLead,
    atNow: rotateByAt("0 seconds"),
    roundTrips: 1,
  },
  {
    name: "a key's rotation deadline half a millisecond after the lead (refused: read to the millisecond)",
    setup: serverLead,
    atNow: rotateByAt("500 microseconds"),
    roundTrips: 1,
  },
  {
    name: "a key's rotation deadline a millisecond after the lead (still counts, with the notice)",
    setup: serverLead,
    atNow: rotateByAt("1 millisecond"),
    roundTrips: 1,
  },
  {
    name: "an empty Bearer (the browser's: provisional)",
    setup: async (p) => ({ key: "empty", clickId: await recordClick(p.links[0]) }),
    roundTrips: 1,
  },
  {
    name: "an unknown key (refused)",
    setup: async (p) => ({ key: { token: "sk_live_unknown" }, clickId: await recordClick(p.links[0]) }),
    roundTrips: 1,
  },
  {
    name: "another program's key (refused: other program)",
    setup: async (p) => ({
      key: { token: (await createProgram()).apiKey },
      clickId: await recordClick(p.links[0]),
    }),
    roundTrips: 1,
  },
  {
    name: "a customer already converted (refused)",
    setup: async (p) => {
      const clickId = await recordClick(p.links[0]);
      await clickedCustomer(p, clickId, null, "converted");
      return { key: "live", clickId };
    },
    roundTrips: 1,
  },
  {
    name: "a browser lead under server_required on a customer nobody has signed up (provisional)",
    setup: async (p) => {
      const clickId = await recordClick(p.links[0]);
      await clickedCustomer(p, clickId);
      return { key: "none", clickId, customerKey: "c" };
    },
    roundTrips: 1,
  },
  {
    name: "a browser lead under browser_allowed promoting a customer nobody has signed up",
    policy: "browser_allowed",
    setup: async (p) => {
      const clickId = await recordClick(p.links[0]);
      await clickedCustomer(p, clickId, "held");
      return { key: "none", clickId, customerKey: "held", programId: "own" };
    },
    roundTrips: 1,
  },
  {
    name: "a browser lead whose customer_key another customer holds (refused)",
    setup: async (p) => {
      await clickedCustomer(p, await recordClick(p.links[1]), "taken");
      return { key: "none", clickId: await recordClick(p.links[0]), customerKey: "taken" };
    },
    roundTrips: 1,
  },
  {
    name: "a browser lead on a test click (refused)",
    setup: async (p) => ({ key: "none", clickId: await recordClick(p.links[0], { testMode: true }) }),
    roundTrips: 1,
  },
  {
    name: "a server lead naming another program in additional_data (live: read, not a rule)",
    setup: async (p) => ({ ...(await serverLead(p)), eventProgramId: "other" }),
    roundTrips: 1,
  },
  {
    name: "a test key (a test lead, left to the rules)",
    setup: async (p) => ({ key: "test", clickId: await recordClick(p.links[0]) }),
    roundTrips: 2,
  },
  {
    name: "a customer named by its customer_key alone (left to the rules)",
    setup: async (p) => {
      await clickedCustomer(p, await recordClick(p.links[0]), "alone");
      return { key: "live", customerKey: "alone" };
    },
    roundTrips: 2,
  },
];

async function intentOf(p: ProgramFixture, lead: LeadSent, now: Date): Promise<LeadIntent> {
  const authorization =
    lead.key === "live"
      ? `Bearer ${p.apiKey}`
      : lead.key === "test"
        ? `Bearer ${p.testApiKey}`
        : lead.key === "empty"
          ? "Bearer "
          : lead.key === "none"
            ? undefined
            : `Bearer ${lead.key.token}`;
  const programId = (which: "own" | "other" | undefined) =>
    which === "own" ? p.programId : which === "other" ? p.programId + 100_000 : null;
  return {
    header: parseBearer(authorization),
    clickId: lead.clickId ?? null,
    customerKey: lead.customerKey ?? null,
    email: lead.email ? await storedEmail(lead.email) : null,
    requestedProgramId: programId(lead.programId),
    eventProgramId: programId(lead.eventProgramId),
    testMode: false,
    eventName: lead.eventName ?? null,
    now,
  };
}

/** The lead as the route runs it: the database's decision at once, else the rules' on the facts it read. */
async function leadAtOnce(intent: LeadIntent) {
  const keyHash = intent.header.kind === "token" ? await sha256Hex(intent.header.token) : null;
  const device = keyHash === null ? browserDevice : null;
  const atOnce = await leadDecidedAtOnce(db, { intent, keyHash, device }, log, () => {});
  if (!atOnce) throw new Error("the database refused the lead");
  if ("decision" in atOnce) return atOnce.decision;
  const decision = decideLead(intent, atOnce.facts);
  if (decision.outcome !== "refused") await writeLead(db, decision.write, device);
  return decision;
}

/** The lead read, decided in TypeScript and written the usual way. */
async function leadUsually(intent: LeadIntent) {
  const keyHash = intent.header.kind === "token" ? await sha256Hex(intent.header.token) : null;
  const device = keyHash === null ? browserDevice : null;
  const facts = await readLeadFacts(db, {
    keyHash,
    clickId: intent.clickId,
    customerKey: intent.customerKey,
    // As the route reads it.
    explicitProgramId: intent.eventProgramId ?? intent.requestedProgramId,
  });
  const decision = decideLead(intent, facts);
  if (decision.outcome !== "refused") await writeLead(db, decision.write, device);
  return decision;
}

/** What the lead decided, ids aside. */
function answerOf(decision: LeadDecision) {
  return {
    outcome: decision.outcome,
    refusal: decision.outcome === "refused" ? decision.refusal : null,
    body: decision.outcome === "provisional" || decision.outcome === "settled" ? decision.body : null,
    rotation: decision.rotation !== null,
    allowedOrigins: decision.allowedOrigins !== undefined,
  };
}

/** A program's rows after the lead: ids as positions, partners by index, timestamps relative to the clock. */
async function rowsOf(p: ProgramFixture, now: Date) {
  const clickRows = await db
    .select({ clickId: clickEvents.clickId, createdAt: clickEvents.createdAt })
    .from(clickEvents)
    .where(eq(clickEvents.programId, p.programId))
    .orderBy(clickEvents.id);
  const click = (id: string | null) => (id === null ? null : clickRows.findIndex((c) => c.clickId === id));
  /** The click whose time a customer's `clicked_at` is (the original click's, to the millisecond), or -1. */
  const clickAt = (at: Date | null) =>
    at === null ? null : clickRows.findIndex((c) => c.createdAt.getTime() === at.getTime());
  const partner = (id: number | null) => (id === null ? null : p.partnerIds.indexOf(id));
  const at = (value: Date | null) =>
    value === null ? null : value.getTime() >= now.getTime() ? value.getTime() - now.getTime() : "before";
  const customerRows = await customersOfProgram(p.programId);
  const customer = (id: number | null) => (id === null ? null : customerRows.findIndex((c) => c.id === id));
  return {
    customers: customerRows.map((c) => ({
      partner: partner(c.partnerId),
      click: click(c.clickId),
      clickedAt: clickAt(c.clickedAt),
      createdAt: at(c.createdAt),
      customerKey: c.customerKey,
      status: c.status,
      emailHash: c.emailHash,
      emailMasked: c.emailMasked,
      signedUpAt: at(c.signedUpAt),
      updatedAt: at(c.updatedAt),
    })),
    leads: (await leadEventsOfProgram(p.programId)).map((l) => ({
      customer: customer(l.customerId),
      partner: partner(l.partnerId),
      click: click(l.clickId),
      customerKey: l.customerKey,
      emailHash: l.emailHash,
      emailMasked: l.emailMasked,
      eventName: l.eventName,
      provisional: l.provisional,
      settledAt: at(l.settledAt),
      viaApiKey: l.viaApiKey,
      // The lead's own device, or a setup's browser lead's (whose address the harness makes up per request).
      ipHash: l.ipHash === browserDevice.ipHash ? "the lead's" : l.ipHash && "a setup's",
      uaHash: l.uaHash === browserDevice.uaHash ? "the lead's" : l.uaHash && "a setup's",
      isTest: l.isTest,
      createdAt: at(l.createdAt),
    })),
    webhookEvents: (await eventsOf(p.programId)).map((e) => e.type),
  };
}

describe("the lead decided at once by the database, against the rules in TypeScript", () => {
  for (const scenario of scenarios) {
    it(`${scenario.name}: the same decision and rows, in ${scenario.roundTrips} round trip(s)`, async () => {
      const options = { leadAuthPolicy: scenario.policy ?? "server_required" };
      const twins = await Promise.all([createProgram(options), createProgram(options)]);
      const [atOnce, usual] = twins;
      // Subscribed, so that each lead's webhook payload is built and enqueued.
      for (const p of twins) await endpointFor(p.programId, "https://hooks.example/lead", ["lead.created"]);
      const sent = [await scenario.setup(atOnce), await scenario.setup(usual)] as const;
      // The lead's clock after every row of the setup: those read "before", the lead's own relative to it.
      await new Promise((resolve) => setTimeout(resolve, 2));
      const now = new Date();
      for (const p of twins) await scenario.atNow?.(p, now);
      let decided: LeadDecision | undefined;
      const trips = await roundTripsOf(async () => {
        decided = await leadAtOnce(await intentOf(atOnce, sent[0], now));
      });
      const usually = await leadUsually(await intentOf(usual, sent[1], now));
      expect(answerOf(decided!)).toEqual(answerOf(usually));
      expect(await rowsOf(atOnce, now)).toEqual(await rowsOf(usual, now));
      expect(trips).toBe(scenario.roundTrips);
    });
  }
});

describe("a lead the database decides otherwise than the rules", () => {
  it("fails (the lead is written) and says so in the log, with the rules' notice set", async () => {
    const p = await createProgram();
    const clickId = await recordClick(p.links[0]);
    // The database is told of the live key (a settled lead), the rules are not (a browser's: provisional).
    const intent: LeadIntent = {
      header: { kind: "absent" },
      clickId,
      customerKey: null,
      email: null,
      requestedProgramId: null,
      eventProgramId: null,
      testMode: false,
      eventName: null,
      now: new Date(),
    };
    const noted: LeadDecision[] = [];
    await expect(
      leadDecidedAtOnce(db, { intent, keyHash: await sha256Hex(p.apiKey), device: null }, log, (decision) =>
        noted.push(decision),
      ),
    ).rejects.toThrow("lead decided otherwise in the database");
    expect(noted.map((decision) => decision.outcome)).toEqual(["provisional"]);
    expect((await leadEventsOfProgram(p.programId)).map((l) => l.provisional)).toEqual([false]);
  });
});

describe("leads decided at once in one batch (record_leads_at_once)", () => {
  it("each answered as its own item: one written, one left to the rules with the facts it read", async () => {
    const p = await createProgram();
    const keyHash = await sha256Hex(p.apiKey);
    const now = new Date();
    const clickId = await recordClick(p.links[0]);
    const intent = (customerKey: string): LeadIntent => ({
      header: { kind: "token", token: p.apiKey },
      clickId,
      customerKey,
      email: null,
      requestedProgramId: null,
      eventProgramId: null,
      testMode: false,
      eventName: null,
      now,
    });
    // Two leads of one click in one batch: the items run in turn, so the second reads the customer the first
    // created, already a lead, and leaves itself to the rules (which refuse it).
    const { rows } = await db.execute<{
      batch_item: number;
      lead_written: string | null;
      failed_code: string;
      facts_customer_by_click: { status: string } | null;
    }>(
      leadAtOnceSent.batch.call(
        ["first", "second"].map((key) => leadAtOnceValues({ intent: intent(key), keyHash, device: null })),
      ),
    );
    expect(rows.map((row) => [Number(row.batch_item), row.lead_written, row.failed_code])).toEqual([
      [0, "settled", null],
      [1, null, null],
    ]);
    expect(rows[0]?.facts_customer_by_click).toBeNull();
    expect(rows[1]?.facts_customer_by_click).toMatchObject({ status: "lead" });
    expect((await customersOfProgram(p.programId)).map((c) => [c.customerKey, c.status])).toEqual([
      ["first", "lead"],
    ]);
    expect((await leadEventsOfProgram(p.programId)).map((l) => l.customerKey)).toEqual(["first"]);
  });
});
