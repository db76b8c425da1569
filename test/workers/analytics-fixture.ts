import { clickDimensions } from "../../lib/analytics/click-dimensions.ts";
import { clickEvents, commissions, customers, leadEvents, refunds, saleEvents } from "../../schema/index.ts";
import { db, type ProgramFixture, unique } from "./harness.ts";

/** A small seeded generator, so a failing data set can be reproduced from its seed. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export interface FactDims {
  partner: string;
  link: string;
  referrer_domain: string;
  utm_source: string;
  utm_medium: string;
  utm_campaign: string;
  landing_page: string;
}

/** One expected fact, as the test computes it independently of the service's SQL. */
export interface ExpectedFact {
  at: Date;
  live: boolean;
  dims: FactDims;
  currency: string;
  clicks: number;
  leads: number;
  provisional_leads: number;
  sales: number;
  revenue_cents: number;
  refunds: number;
  refunded_cents: number;
  commission_cents: number;
}

const sources = [
  { utm: "google", referrer: "https://www.google.com/search?q=x", domain: "google.com" },
  { utm: "newsletter", referrer: "https://mail.example.org/inbox", domain: "mail.example.org" },
  { utm: null, referrer: null, domain: "" },
  { utm: "caf%C3%A9+club", referrer: "https://WWW.Blog.example/post", domain: "blog.example" },
] as const;
const pages = ["/pricing", "/", "/blog/launch"] as const;
const currencies = ["USD", "EUR", "VND"] as const;

const zeroMeasures = {
  clicks: 0,
  leads: 0,
  provisional_leads: 0,
  sales: 0,
  revenue_cents: 0,
  refunds: 0,
  refunded_cents: 0,
  commission_cents: 0,
};

/**
 * Generates and inserts a data set for one program: clicks from several sources and pages (some test
 * clicks), leads (settled and provisional, some test), sales in three currencies with commissions (some
 * test), partial refunds. Event times fall between `from` and `to`, plus events one second on either side
 * of the given boundary instants. Returns the facts the service must count.
 */
export async function insertAnalyticsDataSet(
  p: ProgramFixture,
  linkIds: [number, number],
  options: { seed: number; clicks: number; from: Date; to: Date; boundaries: Date[] },
): Promise<ExpectedFact[]> {
  const random = prng(options.seed);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)] as T;
  const span = options.to.getTime() - options.from.getTime();
  const times: Date[] = [];
  for (const b of options.boundaries)
    times.push(new Date(b.getTime() - 1000), b, new Date(b.getTime() + 1000));
  while (times.length < options.clicks)
    times.push(new Date(options.from.getTime() + Math.floor(random() * span)));
  const origin = p.origin;
  const facts: ExpectedFact[] = [];
  const clickRows: Array<typeof clickEvents.$inferInsert> = [];
  const leadRows: Array<typeof leadEvents.$inferInsert> = [];
  const customerRows: Array<typeof customers.$inferInsert> = [];
  const sales: Array<{
    clickId: string;
    partnerId: number;
    at: Date;
    amount: number;
    currency: string;
    live: boolean;
    dims: FactDims;
    refund: { at: Date; amount: number } | null;
  }> = [];
  for (const at of times) {
    const which = random() < 0.6 ? 0 : 1;
    const source = pick(sources);
    const page = pick(pages);
    const live = random() > 0.1;
    const clickId = unique("clk");
    const utm = source.utm ? `&utm_source=${source.utm}&utm_medium=cpc&utm_campaign=spring` : "";
    const affiliateUrl = `${origin}${page}?aff=${p.links[which]}${utm}`;
    clickRows.push({
      clickId,
      programId: p.programId,
      partnerId: p.partnerIds[which],
      linkId: linkIds[which],
      affiliateUrl,
      referrer: source.referrer,
      isTest: !live,
      createdAt: at,
      // As the click route writes them.
      ...clickDimensions(affiliateUrl, source.referrer),
    });
    const dims: FactDims = {
      partner: String(p.partnerIds[which]),
      link: String(linkIds[which]),
      referrer_domain: source.domain,
      utm_source: source.utm ? decodeURIComponent(source.utm.replace(/\+/g, " ")) : "",
      utm_medium: source.utm ? "cpc" : "",
      utm_campaign: source.utm ? "spring" : "",
      landing_page: `${new URL(origin).host}${page}`,
    };
    facts.push({ ...zeroMeasures, at, live, dims, currency: "", clicks: 1 });
    if (random() < 0.5) {
      const leadAt = new Date(
        Math.min(at.getTime() + Math.floor(random() * 3_600_000), options.to.getTime()),
      );
      const provisional = random() < 0.3;
      leadRows.push({
        programId: p.programId,
        partnerId: p.partnerIds[which],
        clickId,
        provisional,
        isTest: !live,
        createdAt: leadAt,
      });
      facts.push({
        ...zeroMeasures,
        at: leadAt,
        live,
        dims,
        currency: "",
        leads: provisional ? 0 : 1,
        provisional_leads: provisional ? 1 : 0,
      });
      if (random() < 0.5) {
        const saleAt = new Date(
          Math.min(leadAt.getTime() + Math.floor(random() * 7_200_000), options.to.getTime()),
        );
        const amount = 1000 + Math.floor(random() * 50_000);
        const refund =
          random() < 0.3
            ? {
                at: new Date(
                  Math.min(saleAt.getTime() + Math.floor(random() * 86_400_000), options.to.getTime()),
                ),
                amount: Math.floor(amount / 3),
              }
            : null;
        customerRows.push({
          programId: p.programId,
          partnerId: p.partnerIds[which],
          clickId,
          clickedAt: at,
          status: "converted",
          isTest: !live,
        });
        sales.push({
          clickId,
          partnerId: p.partnerIds[which],
          at: saleAt,
          amount,
          currency: pick(currencies),
          live,
          dims,
          refund,
        });
      }
    }
  }
  await db.insert(clickEvents).values(clickRows);
  if (leadRows.length > 0) await db.insert(leadEvents).values(leadRows);
  if (customerRows.length > 0) {
    const inserted = await db
      .insert(customers)
      .values(customerRows)
      .returning({ id: customers.id, clickId: customers.clickId });
    const customerOf = new Map(inserted.map((c) => [c.clickId, c.id]));
    const saleRows = await db
      .insert(saleEvents)
      .values(
        sales.map((s) => ({
          processorEventId: unique("txn"),
          programId: p.programId,
          customerId: customerOf.get(s.clickId) as number,
          partnerId: s.partnerId,
          amountCents: s.amount,
          currency: s.currency,
          refundedCents: s.refund?.amount ?? 0,
          isTest: !s.live,
          createdAt: s.at,
        })),
      )
      .returning({ id: saleEvents.id });
    await db.insert(commissions).values(
      sales.map((s, i) => ({
        saleId: saleRows[i]?.id as number,
        programId: p.programId,
        partnerId: s.partnerId,
        amountCents: Math.round(s.amount / 5),
        currency: s.currency,
        status: "approved" as const,
        isTest: !s.live,
        createdAt: s.at,
      })),
    );
    const refundRows = sales.flatMap((s, i) =>
      s.refund
        ? [
            {
              saleId: saleRows[i]?.id as number,
              idempotencyKey: unique("re"),
              amountCents: s.refund.amount,
              refundedTotalCents: s.refund.amount,
              createdAt: s.refund.at,
            },
          ]
        : [],
    );
    if (refundRows.length > 0) await db.insert(refunds).values(refundRows);
    for (const s of sales) {
      facts.push({
        ...zeroMeasures,
        at: s.at,
        live: s.live,
        dims: s.dims,
        currency: s.currency,
        sales: 1,
        revenue_cents: s.amount,
      });
      facts.push({
        ...zeroMeasures,
        at: s.at,
        live: s.live,
        dims: s.dims,
        currency: s.currency,
        commission_cents: Math.round(s.amount / 5),
      });
      if (s.refund) {
        facts.push({
          ...zeroMeasures,
          at: s.refund.at,
          live: s.live,
          dims: s.dims,
          currency: s.currency,
          refunds: 1,
          refunded_cents: s.refund.amount,
        });
      }
    }
  }
  return facts;
}

/** The expected per-source figures, computed from the facts alone. */
export function expectedBySource(facts: ExpectedFact[], dimension: keyof FactDims, from: Date, to: Date) {
  const out = new Map<
    string,
    {
      clicks: number;
      leads: number;
      provisional_leads: number;
      sales: number;
      money: Record<
        string,
        {
          sales: number;
          revenue_cents: number;
          refunds: number;
          refunded_cents: number;
          net_revenue_cents: number;
          commission_cents: number;
        }
      >;
    }
  >();
  for (const f of facts) {
    if (!f.live || f.at.getTime() < from.getTime() || f.at.getTime() >= to.getTime()) continue;
    const key = f.dims[dimension];
    const entry = out.get(key) ?? { clicks: 0, leads: 0, provisional_leads: 0, sales: 0, money: {} };
    entry.clicks += f.clicks;
    entry.leads += f.leads;
    entry.provisional_leads += f.provisional_leads;
    entry.sales += f.sales;
    if (f.currency) {
      const m = entry.money[f.currency] ?? {
        sales: 0,
        revenue_cents: 0,
        refunds: 0,
        refunded_cents: 0,
        net_revenue_cents: 0,
        commission_cents: 0,
      };
      m.sales += f.sales;
      m.revenue_cents += f.revenue_cents;
      m.refunds += f.refunds;
      m.refunded_cents += f.refunded_cents;
      m.net_revenue_cents += f.revenue_cents - f.refunded_cents;
      m.commission_cents += f.commission_cents;
      entry.money[f.currency] = m;
    }
    out.set(key, entry);
  }
  return out;
}
