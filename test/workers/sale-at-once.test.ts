/**
 * The sale the database decides and writes at once (`lib/tracking/sale/sale-at-once.ts`) against the sale read,
 * decided in TypeScript and written the usual way: the same sale on twin programs (same terms, same customers,
 * the same clock) must answer the same and leave the same rows, on every rule the database applies and on
 * those it leaves to TypeScript; and the database must decide the common sale in one round trip.
 */
import { eq, sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { sha256Hex } from "../../lib/auth/api-keys.ts";
import { commissionAmount } from "../../lib/commissions/commission-policy.ts";
import { createLogger } from "../../lib/log.ts";
import type { Currency } from "../../lib/money.ts";
import { recordSale } from "../../lib/sales/record-sale.ts";
import { saleAtOnceSent, saleAtOnceValues } from "../../lib/tracking/sale/sale-at-once.ts";
import type { SaleRequest } from "../../lib/tracking/sale/sale-request.ts";
import type { CommissionType } from "../../schema/index.ts";
import { commissionRules, programApiKeys, programPartners, programs } from "../../schema/index.ts";
import { createProgram, db, type ProgramFixture, postJson } from "./harness.ts";
import { countDatabaseRoundTrips } from "./round-trip-counter.ts";
import {
  balanceOf,
  click,
  commissionsOf,
  customersOf,
  ledgerOf,
  sale,
  salesOf,
  txn,
} from "./sale-harness.ts";

const roundTripsOf = countDatabaseRoundTrips();
const log = createLogger({ test: "sale-at-once" });
const dayMs = 86_400_000;

type SaleBody = Record<string, unknown>;

interface Scenario {
  name: string;
  program?: {
    commissionType?: CommissionType;
    commissionRate?: string;
    holdDays?: number;
    durationMonths?: number;
  };
  /** What the twin programs get before the sale (the same for both); returns the sale's body (a new id unless given). */
  setup: (p: ProgramFixture) => Promise<SaleBody>;
  /** Run just before the sale, with its clock (a click moved to the window's edge). */
  atNow?: (p: ProgramFixture, now: Date) => Promise<void>;
  /** Round trips of the sale the database may decide: 1 when it does (or a refusal), 2 when it leaves it. */
  roundTrips: 1 | 2;
}

async function lead(p: ProgramFixture, body: Record<string, unknown>): Promise<void> {
  const response = await postJson("/api/v1/track/lead", body, { Authorization: `Bearer ${p.apiKey}` });
  expect(response.status).toBe(200);
}

/** Moves the program's latest click to `ms` before the sale's clock (the window's edge). */
const clickBeforeSale = (ms: number) => async (p: ProgramFixture, now: Date) => {
  await db.execute(
    sql`update affiliate_click_events set created_at = ${new Date(now.getTime() - ms).toISOString()}::timestamptz
        where id = (select max(id) from affiliate_click_events where program_id = ${p.programId})`,
  );
};

const attributed = async (p: ProgramFixture) => ({ amount_cents: 4999, click_id: await click(p) });

/** A customer's second sale, of `amount` cents: its first (100 cents) made it a customer with a commission. */
const returningCustomer = (amount: number) => async (p: ProgramFixture) => {
  const clickId = await click(p);
  expect((await sale(p, { transaction_id: txn(), amount_cents: 100, click_id: clickId })).status).toBe(200);
  return { amount_cents: amount, click_id: clickId };
};

const scenarios: Scenario[] = [
  { name: "a new customer from a click, one-time percent", setup: attributed, roundTrips: 1 },
  {
    name: "a returning customer of a one-time program (no commission)",
    setup: returningCustomer(2500),
    roundTrips: 1,
  },
  {
    name: "a returning customer of a lifetime recurring program",
    program: { commissionType: "recurring_percent", commissionRate: "12.3456" },
    setup: returningCustomer(2501),
    roundTrips: 1,
  },
  {
    name: "a returning customer of a 12-month recurring program (left to the rules)",
    program: { commissionType: "recurring_fixed", commissionRate: "3.5", durationMonths: 12 },
    setup: returningCustomer(2501),
    roundTrips: 2,
  },
  {
    name: "a hold period: the commission pending until then, no credit",
    program: { holdDays: 3 },
    setup: attributed,
    roundTrips: 1,
  },
  {
    name: "fixed terms in a currency without minor units",
    program: { commissionType: "fixed", commissionRate: "7.5" },
    setup: async (p) => ({ ...(await attributed(p)), currency: "vnd" }),
    roundTrips: 1,
  },
  {
    name: "a product's rule (recurring, without a duration: the program's)",
    program: { durationMonths: 0 },
    setup: async (p) => {
      await db.insert(commissionRules).values({
        programId: p.programId,
        productId: "plan_pro",
        commissionType: "recurring_percent",
        commissionRate: "33.3333",
      });
      return { ...(await attributed(p)), product_id: "plan_pro", amount_cents: 1234567 };
    },
    roundTrips: 1,
  },
  {
    name: "a customer by customer_key, made by a server lead (the window measured to its signup)",
    setup: async (p) => {
      const customerKey = `cus_${crypto.randomUUID()}`;
      await lead(p, { click_id: await click(p), customer_key: customerKey });
      return {
        amount_cents: 1000,
        customer_key: customerKey,
        tax_cents: 90,
        line_items: [{ sku: "a", qty: 2 }],
      };
    },
    roundTrips: 1,
  },
  {
    name: "a key marked for rotation (the notice is the rules')",
    setup: async (p) => {
      await db
        .update(programApiKeys)
        .set({ rotationMarkedAt: new Date(Date.now() - dayMs), rotateBy: new Date(Date.now() + 7 * dayMs) })
        .where(eq(programApiKeys.programId, p.programId));
      return attributed(p);
    },
    roundTrips: 1,
  },
  {
    name: "a click exactly at the window's edge (attributed)",
    setup: attributed,
    atNow: clickBeforeSale(60 * dayMs),
    roundTrips: 1,
  },
  {
    name: "a click 1 ms past the window (not attributed, nothing written)",
    setup: attributed,
    atNow: clickBeforeSale(60 * dayMs + 1),
    roundTrips: 1,
  },
  {
    name: "a partner no longer a member (refused)",
    setup: async (p) => {
      const body = await attributed(p);
      await db
        .update(programPartners)
        .set({ status: "removed" })
        .where(eq(programPartners.programId, p.programId));
      return body;
    },
    roundTrips: 1,
  },
  {
    name: "an unknown click (refused)",
    setup: async () => ({ amount_cents: 1000, click_id: "clk_unknown" }),
    roundTrips: 1,
  },
  {
    name: "a transaction_id already recorded (409)",
    setup: async (p) => {
      const body = { ...(await attributed(p)), transaction_id: txn() };
      expect((await sale(p, { ...body, amount_cents: 1 })).status).toBe(200);
      return body;
    },
    roundTrips: 1,
  },
];

/** A program's rows after the sale, ids as positions and timestamps relative to the sale's clock. */
async function rowsOf(p: ProgramFixture, now: Date) {
  const partner = (id: number | null) => (id === null ? null : p.partnerIds.indexOf(id));
  const at = (value: Date | null) =>
    value === null ? null : value.getTime() >= now.getTime() ? value.getTime() - now.getTime() : "before";
  const customers = await customersOf(p.programId);
  const customer = (id: number | null) => (id === null ? null : customers.findIndex((c) => c.id === id));
  return {
    customers: customers.map((c) => ({
      partner: partner(c.partnerId),
      status: c.status,
      clickedAt: at(c.clickedAt),
      signedUpAt: at(c.signedUpAt),
      firstConvertedAt: at(c.firstConvertedAt),
      firstCommissionAt: at(c.firstCommissionAt),
    })),
    sales: (await salesOf(p.programId)).map((s) => ({
      customer: customer(s.customerId),
      partner: partner(s.partnerId),
      amountCents: s.amountCents,
      taxCents: s.taxCents,
      currency: s.currency,
      saleType: s.saleType,
      lineItems: s.lineItems,
      isRecurring: s.isRecurring,
      productId: s.productId,
      livemode: s.livemode,
      source: s.source,
      needsCommission: s.needsCommission,
      isTest: s.isTest,
      idNamespace: s.idNamespace,
      createdAt: at(s.createdAt),
    })),
    commissions: (await commissionsOf(p.programId)).map((c) => ({
      partner: partner(c.partnerId),
      amountCents: c.amountCents,
      currency: c.currency,
      status: c.status,
      holdUntil: at(c.holdUntil),
      approvedAt: at(c.approvedAt),
      createdAt: at(c.createdAt),
    })),
    ledger: (await ledgerOf(p.programId)).map((l) => ({
      partner: partner(l.partnerId),
      amountCents: l.amountCents,
    })),
    balances: [
      await balanceOf(p.programId, p.partnerIds[0]),
      await balanceOf(p.programId, p.partnerIds[1]),
      await balanceOf(p.programId, p.partnerIds[0], "VND"),
    ],
  };
}

/** What the sale answered, ids aside. */
function answerOf(outcome: Awaited<ReturnType<typeof recordSale>>) {
  const { decision, written } = outcome;
  return {
    outcome: decision.outcome,
    refusal: decision.outcome === "refused" ? decision.refusal.reason : null,
    message: decision.outcome === "refused" ? null : decision.message,
    commission: decision.outcome === "record" ? decision.commission : null,
    // Set at each twin's setup: whether the key's rotation notice is due.
    rotation: decision.rotation !== null,
    written: written && {
      commission: written.commissionId !== null,
      commissionFailed: written.commissionFailed,
    },
  };
}

async function twinPrograms(scenario: Scenario): Promise<[ProgramFixture, ProgramFixture]> {
  const { durationMonths, ...options } = scenario.program ?? {};
  const twins = await Promise.all([createProgram(options), createProgram(options)]);
  if (durationMonths !== undefined) {
    for (const p of twins) {
      await db.update(programs).set({ durationMonths }).where(eq(programs.id, p.programId));
    }
  }
  return twins;
}

describe("the sale decided at once by the database, against the rules in TypeScript", () => {
  for (const scenario of scenarios) {
    it(`${scenario.name}: the same answer and rows, in ${scenario.roundTrips} round trip(s)`, async () => {
      const [atOnce, usual] = await twinPrograms(scenario);
      const bodies = [await scenario.setup(atOnce), await scenario.setup(usual)] as const;
      // The sale's clock after every row of the setup: those read "before", the sale's own relative to it.
      await new Promise((resolve) => setTimeout(resolve, 2));
      const now = new Date();
      for (const p of [atOnce, usual]) await scenario.atNow?.(p, now);
      const run = async (p: ProgramFixture, body: SaleBody, useAtOnce: boolean) =>
        recordSale(
          db,
          {
            header: { kind: "token", token: p.apiKey },
            keyHash: await sha256Hex(p.apiKey),
            body: { transaction_id: txn(), ...body } as SaleRequest,
            now,
            atOnce: useAtOnce,
          },
          log,
        );
      let decided: Awaited<ReturnType<typeof recordSale>> | undefined;
      const trips = await roundTripsOf(async () => {
        decided = await run(atOnce, bodies[0], true);
      });
      const usually = await run(usual, bodies[1], false);
      expect(answerOf(decided!)).toEqual(answerOf(usually));
      expect(await rowsOf(atOnce, now)).toEqual(await rowsOf(usual, now));
      expect(trips).toBe(scenario.roundTrips);
    });
  }
});

describe("commission amounts: the database's rounding is the rules'", () => {
  const cases: Array<{ type: CommissionType; rate: string; amount: number; currency: Currency }> = [
    { type: "percent", rate: "20", amount: 1, currency: "USD" },
    { type: "percent", rate: "20", amount: 3, currency: "USD" },
    { type: "percent", rate: "12.5", amount: 4, currency: "USD" },
    { type: "percent", rate: "12.5", amount: 12, currency: "USD" },
    { type: "percent", rate: "0.0001", amount: 4_999_999, currency: "USD" },
    { type: "percent", rate: "0.0001", amount: 5_000_000, currency: "USD" },
    { type: "recurring_percent", rate: "33.3333", amount: 1_234_567_891, currency: "EUR" },
    { type: "percent", rate: "99.9999", amount: 9_007_199_254, currency: "VND" },
    { type: "fixed", rate: "0.005", amount: 100, currency: "USD" },
    { type: "fixed", rate: "0.0049", amount: 100, currency: "EUR" },
    { type: "recurring_fixed", rate: "19.99", amount: 100, currency: "USD" },
    { type: "fixed", rate: "1000.5", amount: 100, currency: "VND" },
  ];
  for (const c of cases) {
    it(`${c.type} ${c.rate} of ${c.amount} ${c.currency}`, async () => {
      const p = await createProgram({ commissionType: c.type, commissionRate: c.rate });
      const clickId = await click(p);
      let response: Awaited<ReturnType<typeof sale>> | undefined;
      const trips = await roundTripsOf(async () => {
        response = await sale(p, {
          transaction_id: txn(),
          amount_cents: c.amount,
          currency: c.currency,
          click_id: clickId,
        });
      });
      expect(response?.status).toBe(200);
      expect(trips).toBe(1);
      const [commission] = await commissionsOf(p.programId);
      expect(commission?.amountCents).toBe(
        commissionAmount({ type: c.type, rate: c.rate, durationMonths: 0 }, c.amount, c.currency),
      );
    });
  }
});

describe("sales decided at once in one batch (record_sales_at_once)", () => {
  it("run in the order of the partners they credit, each answered as its own item", async () => {
    const p = await createProgram();
    const [lower, higher] = [...p.partnerIds].sort((a, b) => a - b) as [number, number];
    const linkOf = (partnerId: number) => p.links[p.partnerIds.indexOf(partnerId)];
    // Sent higher partner first: the batch runs the lower partner's sale first (its sale id is the smaller).
    const clicks = [await click(p, linkOf(higher)), await click(p, linkOf(lower))];
    const keyHash = await sha256Hex(p.apiKey);
    const now = new Date();
    const ids = clicks.map(() => txn());
    const { rows } = await db.execute<{ batch_item: number; sale_written: boolean; sale_id: string }>(
      saleAtOnceSent.batch.call(
        clicks.map((clickId, i) =>
          saleAtOnceValues({
            keyHash,
            body: { transaction_id: ids[i]!, amount_cents: 1000, click_id: clickId } as never,
            currency: "USD",
            now,
          }),
        ),
      ),
    );
    expect(rows.map((row) => [Number(row.batch_item), row.sale_written])).toEqual([
      [1, true],
      [0, true],
    ]);
    const sales = await salesOf(p.programId);
    expect(sales.map((s) => [s.processorEventId, s.partnerId])).toEqual([
      [ids[1], lower],
      [ids[0], higher],
    ]);
  });
});
