import { eq, inArray, sql } from "drizzle-orm";
import { scanFraudSignals } from "../../lib/fraud/scan-fraud-signals.ts";
import { commissions, leadEvents, partners, saleEvents } from "../../schema/index.ts";
import { db, freshIp, type ProgramFixture, postJson } from "./harness.ts";

/** One visitor's device: the address and user agent its calls carry. */
export interface Device {
  ip: string;
  userAgent: string;
}

export function newDevice(): Device {
  return { ip: freshIp(), userAgent: `Mozilla/5.0 (test ${crypto.randomUUID().slice(0, 8)})` };
}

function deviceHeaders(device: Device): Record<string, string> {
  return { "CF-Connecting-IP": device.ip, "User-Agent": device.userAgent };
}

export async function clickFrom(p: ProgramFixture, device: Device, link = p.links[0]): Promise<string> {
  const response = await postJson(
    "/api/v1/track/click",
    { affiliate_url: `https://shop.example/?aff=${link}` },
    deviceHeaders(device),
  );
  if (response.status !== 200) throw new Error(`click failed: ${JSON.stringify(response.body)}`);
  return response.body.click_id as string;
}

/** A lead of the click: keyless from the browser's device, or sent with the program key (the brand's server). */
export async function leadFrom(
  p: ProgramFixture,
  device: Device,
  body: {
    click_id: string;
    email?: string;
    customer_key?: string;
    additional_data?: Record<string, unknown>;
  },
  key: string | null = null,
): Promise<number> {
  const headers: Record<string, string> = deviceHeaders(device);
  if (key) headers.Authorization = `Bearer ${key}`;
  const response = await postJson("/api/v1/track/lead", body, headers);
  if (response.status !== 200) throw new Error(`lead failed: ${JSON.stringify(response.body)}`);
  const [row] = await db
    .select({ id: leadEvents.id })
    .from(leadEvents)
    .where(eq(leadEvents.programId, p.programId))
    .orderBy(sql`${leadEvents.id} desc`)
    .limit(1);
  return row!.id;
}

/** Moves a click (and the customer made from it) back, so nothing after it counts as fast. */
export async function ageClickAndCustomer(clickId: string, seconds = 3600): Promise<void> {
  await db.execute(sql`
    update affiliate_click_events set created_at = created_at - make_interval(secs => ${seconds})
    where click_id = ${clickId}`);
  await db.execute(sql`
    update customers set clicked_at = clicked_at - make_interval(secs => ${seconds}) where click_id = ${clickId}`);
}

export async function leadRows(ids: number[]) {
  return db.select().from(leadEvents).where(inArray(leadEvents.id, ids)).orderBy(leadEvents.id);
}

export async function leadRow(id: number) {
  return (await leadRows([id]))[0]!;
}

export async function saleFlags(saleId: number) {
  const [row] = await db.select().from(saleEvents).where(eq(saleEvents.id, saleId));
  return row!;
}

export async function commissionOfSale(saleId: number) {
  const [row] = await db.select().from(commissions).where(eq(commissions.saleId, saleId));
  return row!;
}

export async function partnerEmail(partnerId: number): Promise<string> {
  const [row] = await db.select({ email: partners.email }).from(partners).where(eq(partners.id, partnerId));
  return row!.email;
}

export async function setPartnerEmail(partnerId: number, email: string): Promise<void> {
  await db.update(partners).set({ email }).where(eq(partners.id, partnerId));
}

/**
 * Runs the scan until the given leads and sales are scanned. The scan takes the whole (shared) database's
 * oldest unscanned rows first, in batches, and other tests' runs may take some of ours: both are fine, the
 * verdict of a row does not depend on which run scanned it.
 */
export async function scanUntilScanned(leadIds: number[], saleIds: number[] = []): Promise<void> {
  for (let run = 0; run < 100; run++) {
    const leads = leadIds.length
      ? await db
          .select({ id: leadEvents.id })
          .from(leadEvents)
          .where(sql`${inArray(leadEvents.id, leadIds)} and ${leadEvents.fraudScannedAt} is null`)
      : [];
    const sales = saleIds.length
      ? await db
          .select({ id: saleEvents.id })
          .from(saleEvents)
          .where(sql`${inArray(saleEvents.id, saleIds)} and ${saleEvents.fraudScannedAt} is null`)
      : [];
    if (leads.length === 0 && sales.length === 0) return;
    await scanFraudSignals(db, new Date());
  }
  throw new Error("the fraud scan did not reach the rows");
}
