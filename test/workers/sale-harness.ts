import { and, eq, sql } from "drizzle-orm";
import { balanceLedger, commissions, customers, partnerBalances, saleEvents } from "../../schema/index.ts";
import { db, type ProgramFixture, postJson, unique } from "./harness.ts";

export const salePath = "/api/v1/track/sale";

export function txn(): string {
  return unique("txn");
}

/** The values of a live API sale of 10.00 USD without partner or customer, for the sale inserts called alone. */
export function liveSaleValues(programId: number, processorEventId: string, now = new Date().toISOString()) {
  return {
    processorEventId,
    programId,
    partnerId: null,
    amountCents: 1000,
    taxCents: 0,
    currency: "USD",
    saleType: "payment",
    lineItems: null,
    isRecurring: false,
    subscriptionId: null,
    subscriptionInterval: null,
    productId: null,
    occurredAt: null,
    provider: null,
    providerPaymentId: null,
    livemode: true,
    source: "api",
    needsCommission: false,
    isTest: false,
    now,
  };
}

export async function click(p: ProgramFixture, link = p.links[0]): Promise<string> {
  const response = await postJson("/api/v1/track/click", {
    affiliate_url: `https://shop.example/?aff=${link}`,
  });
  if (response.status !== 200) throw new Error(`click failed: ${JSON.stringify(response.body)}`);
  return response.body.click_id as string;
}

export function sale(p: ProgramFixture, body: Record<string, unknown>, key = p.apiKey) {
  return postJson(salePath, body, { Authorization: `Bearer ${key}` });
}

export async function salesOf(programId: number) {
  return db.select().from(saleEvents).where(eq(saleEvents.programId, programId)).orderBy(saleEvents.id);
}

export async function commissionsOf(programId: number) {
  return db.select().from(commissions).where(eq(commissions.programId, programId)).orderBy(commissions.id);
}

export async function balanceOf(programId: number, partnerId: number, currency = "USD"): Promise<number> {
  const [row] = await db
    .select()
    .from(partnerBalances)
    .where(
      and(
        eq(partnerBalances.programId, programId),
        eq(partnerBalances.partnerId, partnerId),
        eq(partnerBalances.currency, currency),
      ),
    );
  return row?.balanceCents ?? 0;
}

export async function ledgerOf(programId: number) {
  return db
    .select()
    .from(balanceLedger)
    .where(eq(balanceLedger.programId, programId))
    .orderBy(balanceLedger.id);
}

export async function customersOf(programId: number) {
  return db.select().from(customers).where(eq(customers.programId, programId)).orderBy(customers.id);
}

/** Moves a click back in time (the tests' way to age a click past a window without a fake clock). */
export async function ageClick(clickId: string, days: number): Promise<void> {
  await db.execute(
    sql`update affiliate_click_events set created_at = now() - make_interval(days => ${days}::int) where click_id = ${clickId}`,
  );
}
