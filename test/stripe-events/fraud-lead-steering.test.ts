import { describe, expect, it } from "vitest";
import { commissionOfSale, leadRows, saleFlags, scanUntilScanned } from "../workers/fraud-harness.ts";
import {
  ageClick,
  api,
  checkoutSession,
  connectedProgram,
  deliver,
  event,
  leadsOf,
  salesOf,
  unique,
} from "./stripe-harness.ts";

/** The partner's own phone: every call of the attack comes from it. */
const partnerPhone = { "CF-Connecting-IP": "198.51.100.23", "User-Agent": "PartnerPhone/1.0" };

async function clickFrom(link: string, headers: Record<string, string>): Promise<string> {
  const response = await api(
    "/api/v1/track/click",
    { affiliate_url: `https://shop.example/?aff=${link}` },
    headers,
  );
  if (response.status !== 200) throw new Error(`click failed: ${JSON.stringify(response.body)}`);
  const clickId = response.body.click_id as string;
  // An hour-old click: the signals tested here are not about speed.
  await ageClick(clickId, 1);
  return clickId;
}

async function keylessLead(body: Record<string, unknown>, headers: Record<string, string>) {
  const response = await api("/api/v1/track/lead", body, headers);
  if (response.status !== 200) throw new Error(`lead failed: ${JSON.stringify(response.body)}`);
  return response.body;
}

describe("lead_steering: a keyless lead with someone else's email, paid out by a payment found by email", () => {
  it("flags the sale and its commission (lead_steering, partner_device), under server_required", async () => {
    const p = await connectedProgram({ leadAuthPolicy: "server_required" });
    const link = p.links[0];
    // The partner tries its own link once, with an address of its own...
    const ownClick = await clickFrom(link, partnerPhone);
    await keylessLead({ click_id: ownClick, email: `${unique("me")}@example.net` }, partnerPhone);
    // ...then, from the same phone, sends a keyless lead carrying a buyer's address it knows.
    const victim = `${unique("buyer")}@example.com`;
    const steeredClick = await clickFrom(link, partnerPhone);
    const steered = await keylessLead({ click_id: steeredClick, email: victim }, partnerPhone);
    expect(steered).toMatchObject({ provisional: true });

    // The buyer pays on the brand's site, never having clicked: no metadata, found by email.
    const payment = await deliver(
      event("checkout.session.completed", checkoutSession({ email: victim }), { account: p.accountId }),
    );
    expect(payment.body).toMatchObject({ outcome: "recorded", attributed_by: "email" });
    const [recorded] = await salesOf(p.programId);
    const leadIds = (await leadsOf(p.programId)).map((l) => l.id);

    await scanUntilScanned(leadIds, [recorded!.id]);
    const leads = await leadRows(leadIds);
    expect(leads.map((l) => l.fraudFlags)).toEqual([[], ["partner_device"]]);
    expect((await saleFlags(recorded!.id)).fraudFlags).toEqual(["lead_steering", "partner_device"]);
    expect((await commissionOfSale(recorded!.id)).fraudFlags).toEqual(["lead_steering", "partner_device"]);
  });

  it("does not flag a payment by email of a customer whose lead the brand's server confirmed", async () => {
    const p = await connectedProgram({ leadAuthPolicy: "server_required" });
    const buyer = { "CF-Connecting-IP": "198.51.100.77", "User-Agent": "BuyerLaptop/2.0" };
    const clickId = await clickFrom(p.links[0], buyer);
    const email = `${unique("real")}@example.com`;
    await keylessLead({ click_id: clickId, email }, buyer);
    const confirmed = await api(
      "/api/v1/track/lead",
      { click_id: clickId, customer_key: unique("user"), email },
      { Authorization: `Bearer ${p.apiKey}` },
    );
    expect(confirmed.status).toBe(200);
    const payment = await deliver(
      event("checkout.session.completed", checkoutSession({ email }), { account: p.accountId }),
    );
    expect(payment.body).toMatchObject({ outcome: "recorded", attributed_by: "email" });
    const [recorded] = await salesOf(p.programId);
    await scanUntilScanned(
      (await leadsOf(p.programId)).map((l) => l.id),
      [recorded!.id],
    );
    expect((await saleFlags(recorded!.id)).fraudFlags).toEqual([]);
    expect((await commissionOfSale(recorded!.id)).fraudFlags).toEqual([]);
  });
});
