import { env } from "cloudflare:workers";
import { sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import trackingWorker from "../../functions/tracking/index.ts";
import { ConfigError, localDeviceHashKey, readConfig } from "../../lib/config/env.ts";
import { deviceHashes } from "../../lib/fraud/device-hash.ts";
import { scanLeadSignals } from "../../lib/fraud/scan-lead-signals.ts";
import { scanSaleSignals } from "../../lib/fraud/scan-sale-signals.ts";
import { leadEvents } from "../../schema/index.ts";
import {
  ageClickAndCustomer,
  clickFrom,
  commissionOfSale,
  leadFrom,
  leadRow,
  leadRows,
  newDevice,
  partnerEmail,
  saleFlags,
  scanUntilScanned,
  setPartnerEmail,
} from "./fraud-harness.ts";
import { clicksOfProgram, createProgram, db, fetchWorker, unique } from "./harness.ts";
import { sale, txn } from "./sale-harness.ts";

const hex64 = /^[0-9a-f]{64}$/;

/** A click aged an hour, then a keyless lead of it: nothing fast about it. */
async function calmLead(
  p: Awaited<ReturnType<typeof createProgram>>,
  device = newDevice(),
  email = `${unique("buyer")}@example.com`,
  link = p.links[0],
) {
  const clickId = await clickFrom(p, device, link);
  await ageClickAndCustomer(clickId);
  return { clickId, leadId: await leadFrom(p, device, { click_id: clickId, email }) };
}

describe("DEVICE_HASH_KEY", () => {
  it.each([
    { env: {}, key: undefined },
    { env: { DEVICE_HASH_KEY: "a-production-key-of-some-length" }, key: "a-production-key-of-some-length" },
  ])("is read once at the entry ($key)", ({ env, key }) => {
    expect(readConfig({ DATABASE_URL: "postgres://db", ...env }).deviceHashKey).toBe(key);
  });

  it.each([
    { value: "short", message: "Too small: expected string to have >=16 characters" },
    { value: 42, message: "Invalid input: expected string, received number" },
  ])("refuses $value: a ConfigError naming the binding", ({ value, message }) => {
    const read = () => readConfig({ DATABASE_URL: "postgres://db", DEVICE_HASH_KEY: value });
    expect(read).toThrow(ConfigError);
    expect(read).toThrow(`Invalid worker configuration: DEVICE_HASH_KEY: ${message}`);
  });
});

describe("device hashes", () => {
  it("are not made without DEVICE_HASH_KEY: the click is recorded without them, the worker says why once", async () => {
    const p = await createProgram();
    const device = newDevice();
    const logged: string[] = [];
    const original = console.error;
    console.error = (line: unknown) => logged.push(String(line));
    const send = () =>
      fetchWorker(
        trackingWorker,
        "/api/v1/track/click",
        {
          method: "POST",
          headers: { "CF-Connecting-IP": device.ip, "User-Agent": device.userAgent },
          body: JSON.stringify({ affiliate_url: `https://shop.example/?aff=${p.links[0]}` }),
        },
        { ...env, DEVICE_HASH_KEY: undefined },
      );
    try {
      expect((await send()).status).toBe(200);
      expect((await send()).status).toBe(200);
    } finally {
      console.error = original;
    }
    const rows = await clicksOfProgram(p.programId);
    expect(rows).toHaveLength(2);
    for (const row of rows) expect(row).toMatchObject({ ipHash: null, uaHash: null });
    expect(logged.filter((line) => line.includes("DEVICE_HASH_KEY is not set"))).toHaveLength(1);
    // With the key (the test bindings, as the local stack's), the same device is hashed.
    await clickFrom(p, device);
    expect((await clicksOfProgram(p.programId)).filter((row) => row.ipHash !== null)).toHaveLength(1);
  });

  it("are keyed HMACs of address and user agent: stable per key, never the values, null when unknown", async () => {
    const a = await deviceHashes(localDeviceHashKey, "203.0.113.7", "Agent/1");
    expect(a.ipHash).toMatch(hex64);
    expect(a.uaHash).toMatch(hex64);
    expect(a.ipHash).not.toBe(a.uaHash);
    expect(await deviceHashes(localDeviceHashKey, "203.0.113.7", "Agent/1")).toEqual(a);
    const otherKey = await deviceHashes("another-key-of-16-chars", "203.0.113.7", "Agent/1");
    expect(otherKey.ipHash).not.toBe(a.ipHash);
    expect(otherKey.uaHash).not.toBe(a.uaHash);
    // After another key, the first key's hashes again (the user agents' hashes are kept per key).
    expect(await deviceHashes(localDeviceHashKey, "203.0.113.7", "Agent/1")).toEqual(a);
    // HMAC-SHA256 of "<purpose>:<value>", in hex, as computed here independently.
    const key = await crypto.subtle.importKey(
      "raw",
      new TextEncoder().encode(localDeviceHashKey),
      { name: "HMAC", hash: "SHA-256" },
      false,
      ["sign"],
    );
    const hmacHex = async (text: string) =>
      Buffer.from(await crypto.subtle.sign("HMAC", key, new TextEncoder().encode(text))).toString("hex");
    expect(a).toEqual({ ipHash: await hmacHex("ip:203.0.113.7"), uaHash: await hmacHex("ua:Agent/1") });
    expect(await deviceHashes(localDeviceHashKey, "unknown", null)).toEqual({ ipHash: null, uaHash: null });
    expect((await deviceHashes(localDeviceHashKey, "", "Agent/1")).ipHash).toBeNull();
  });

  it("are written by the click insert and by browser leads; a lead sent with the program key stores none", async () => {
    const p = await createProgram();
    const device = newDevice();
    const expected = await deviceHashes(localDeviceHashKey, device.ip, device.userAgent);
    const clickId = await clickFrom(p, device);
    const [clickRow] = await clicksOfProgram(p.programId);
    expect(clickRow).toMatchObject({ clickId, ipHash: expected.ipHash, uaHash: expected.uaHash });
    expect(JSON.stringify(clickRow)).not.toContain(device.ip);

    const browser = await leadRow(await leadFrom(p, device, { click_id: clickId, email: "x@example.com" }));
    expect(browser).toMatchObject({ provisional: true, ipHash: expected.ipHash, uaHash: expected.uaHash });
    const keyed = await leadRow(
      await leadFrom(p, device, { click_id: clickId, customer_key: unique("user") }, p.apiKey),
    );
    expect(keyed).toMatchObject({ provisional: false, viaApiKey: true, ipHash: null, uaHash: null });
  });
});

describe("lead signals", () => {
  it("an unremarkable lead gets no flag, and is marked scanned", async () => {
    const p = await createProgram();
    const { leadId } = await calmLead(p);
    await scanUntilScanned([leadId]);
    const row = await leadRow(leadId);
    expect(row.fraudFlags).toEqual([]);
    expect(row.fraudScannedAt).not.toBeNull();
  });

  it("self_referral: the partner's own address (any case and spaces), or its private domain", async () => {
    const p = await createProgram();
    const own = await partnerEmail(p.partnerIds[0]);
    const domain = own.split("@")[1];
    const cases = [
      { email: ` ${own.toUpperCase()} `, flagged: true },
      { email: `${unique("colleague")}@${domain}`, flagged: true },
      { email: `${unique("stranger")}@example.com`, flagged: false },
    ];
    const ids: number[] = [];
    for (const c of cases) ids.push((await calmLead(p, newDevice(), c.email)).leadId);
    await scanUntilScanned(ids);
    const rows = await leadRows(ids);
    expect(rows.map((r) => r.fraudFlags)).toEqual(cases.map((c) => (c.flagged ? ["self_referral"] : [])));
  });

  it("self_referral: a shared public mail provider's domain is no evidence, the same address still is", async () => {
    const p = await createProgram();
    const own = `${unique("partner")}@gmail.com`;
    await setPartnerEmail(p.partnerIds[0], own);
    const other = await calmLead(p, newDevice(), `${unique("someone")}@gmail.com`);
    const same = await calmLead(p, newDevice(), own);
    await scanUntilScanned([other.leadId, same.leadId]);
    expect((await leadRow(other.leadId)).fraudFlags).toEqual([]);
    expect((await leadRow(same.leadId)).fraudFlags).toEqual(["self_referral"]);
  });

  it("disposable_email: a listed domain, or a subdomain of a domain listed with all its subdomains", async () => {
    const p = await createProgram();
    const cases = [
      { email: `${unique("x")}@mailinator.com`, flags: ["disposable_email"] },
      { email: `${unique("x")}@anything.33mail.com`, flags: ["disposable_email"] },
      { email: `${unique("x")}@example.org`, flags: [] },
    ];
    const ids: number[] = [];
    for (const c of cases) ids.push((await calmLead(p, newDevice(), c.email)).leadId);
    await scanUntilScanned(ids);
    expect((await leadRows(ids)).map((r) => r.fraudFlags)).toEqual(cases.map((c) => c.flags));
  });

  it("fast_conversion: a lead less than 5 seconds after its click; a keyed lead too", async () => {
    const p = await createProgram();
    const device = newDevice();
    const fastClick = await clickFrom(p, device);
    const fast = await leadFrom(p, device, { click_id: fastClick, email: `${unique("f")}@example.com` });
    const keyedClick = await clickFrom(p, newDevice());
    const keyed = await leadFrom(p, device, { click_id: keyedClick, customer_key: unique("k") }, p.apiKey);
    const calm = await calmLead(p);
    await scanUntilScanned([fast, keyed, calm.leadId]);
    expect((await leadRows([fast, keyed, calm.leadId])).map((r) => r.fraudFlags)).toEqual([
      ["fast_conversion"],
      ["fast_conversion"],
      [],
    ]);
  });

  it("ip_velocity: the fifth distinct customer's lead from one address within the hour, and those after", async () => {
    const p = await createProgram();
    const shared = newDevice();
    const ids: number[] = [];
    // Alternating partners, so the device signal of one partner is not what is tested here.
    for (let i = 0; i < 6; i++) {
      const clickId = await clickFrom(p, newDevice(), p.links[i % 2]);
      await ageClickAndCustomer(clickId);
      ids.push(await leadFrom(p, shared, { click_id: clickId, email: `${unique(`v${i}`)}@example.com` }));
    }
    // A lead from another address is not affected.
    const elsewhere = await calmLead(p);
    await scanUntilScanned([...ids, elsewhere.leadId]);
    const rows = await leadRows(ids);
    expect(rows.map((r) => r.fraudFlags.includes("ip_velocity"))).toEqual([
      false,
      false,
      false,
      false,
      true,
      true,
    ]);
    expect((await leadRow(elsewhere.leadId)).fraudFlags).toEqual([]);
  });

  it("ip_velocity: leads older than the hour, and test leads, do not count toward live ones", async () => {
    const p = await createProgram();
    const shared = newDevice();
    const ids: number[] = [];
    for (let i = 0; i < 4; i++) {
      const clickId = await clickFrom(p, newDevice(), p.links[i % 2]);
      await ageClickAndCustomer(clickId);
      ids.push(await leadFrom(p, shared, { click_id: clickId, email: `${unique(`o${i}`)}@example.com` }));
    }
    // One of the four moved out of the window: with the fifth live lead there are four in the hour.
    await db.execute(
      sql`update ${leadEvents} set created_at = created_at - interval '2 hours' where id = ${ids[0]}`,
    );
    for (let i = 0; i < 3; i++) {
      const clickId = await clickFrom(p, newDevice());
      await leadFrom(p, shared, {
        click_id: clickId,
        email: `${unique(`t${i}`)}@example.com`,
        additional_data: { test_mode: true },
      });
    }
    const clickId = await clickFrom(p, newDevice(), p.links[1]);
    await ageClickAndCustomer(clickId);
    const fifth = await leadFrom(p, shared, { click_id: clickId, email: `${unique("v5")}@example.com` });
    await scanUntilScanned([...ids, fifth]);
    expect((await leadRow(fifth)).fraudFlags).not.toContain("ip_velocity");
  });

  it("partner_device: a device that already converted another customer of the same partner", async () => {
    const p = await createProgram();
    const partnerPhone = newDevice();
    const first = await calmLead(p, partnerPhone, `${unique("one")}@example.com`);
    const second = await calmLead(p, partnerPhone, `${unique("two")}@example.com`);
    // The same device through the OTHER partner's link: that partner's first customer from it.
    const otherPartner = await calmLead(p, partnerPhone, `${unique("three")}@example.com`, p.links[1]);
    // The same customer again (same email) from the device is one customer, not two.
    const again = await calmLead(p, newDevice(), `${unique("four")}@example.com`);
    const device = newDevice();
    const email = `${unique("same")}@example.com`;
    const sameOnce = await calmLead(p, device, email);
    const sameTwice = await calmLead(p, device, email);
    await scanUntilScanned([
      first.leadId,
      second.leadId,
      otherPartner.leadId,
      again.leadId,
      sameOnce.leadId,
      sameTwice.leadId,
    ]);
    expect(
      (
        await leadRows([first.leadId, second.leadId, otherPartner.leadId, sameOnce.leadId, sameTwice.leadId])
      ).map((r) => r.fraudFlags),
    ).toEqual([[], ["partner_device"], [], [], []]);
  });
});

describe("sale signals", () => {
  it("a sale gets its customer's lead signals and its own; its commission gets the sale's", async () => {
    const p = await createProgram();
    const device = newDevice();
    const clickId = await clickFrom(p, device);
    const customerKey = unique("user");
    // A settled lead from the brand's server, with a disposable address, right after the click.
    const leadId = await leadFrom(
      p,
      device,
      { click_id: clickId, customer_key: customerKey, email: `${unique("d")}@mailinator.com` },
      p.apiKey,
    );
    const response = await sale(p, {
      transaction_id: txn(),
      amount_cents: 10_000,
      customer_key: customerKey,
    });
    expect(response.status).toBe(200);
    const saleId = response.body.sale_id as number;
    await scanUntilScanned([leadId], [saleId]);
    expect((await leadRow(leadId)).fraudFlags).toEqual(["disposable_email", "fast_conversion"]);
    const row = await saleFlags(saleId);
    expect(row.fraudFlags).toEqual(["disposable_email", "fast_conversion"]);
    expect(row.fraudScannedAt).not.toBeNull();
    expect((await commissionOfSale(saleId)).fraudFlags).toEqual(["disposable_email", "fast_conversion"]);
  });

  it("an unremarkable sale, and its commission, get no flag", async () => {
    const p = await createProgram();
    const clickId = await clickFrom(p, newDevice());
    await ageClickAndCustomer(clickId);
    const response = await sale(p, { transaction_id: txn(), amount_cents: 10_000, click_id: clickId });
    const saleId = response.body.sale_id as number;
    await scanUntilScanned([], [saleId]);
    expect((await saleFlags(saleId)).fraudFlags).toEqual([]);
    expect((await commissionOfSale(saleId)).fraudFlags).toEqual([]);
  });

  it("a sale waits for its customer's leads to be scanned", async () => {
    const p = await createProgram();
    const clickId = await clickFrom(p, newDevice());
    await ageClickAndCustomer(clickId);
    const customerKey = unique("user");
    const leadId = await leadFrom(
      p,
      newDevice(),
      { click_id: clickId, customer_key: customerKey, email: `${unique("w")}@mailinator.com` },
      p.apiKey,
    );
    const response = await sale(p, { transaction_id: txn(), amount_cents: 5_000, customer_key: customerKey });
    const saleId = response.body.sale_id as number;
    // The lead not scanned yet (only this file's runs scan in this window): the sale is not taken.
    await db.execute(sql`update ${leadEvents} set fraud_scanned_at = null where id = ${leadId}`);
    await scanSaleSignals(db, new Date());
    expect((await saleFlags(saleId)).fraudScannedAt).toBeNull();
    await scanUntilScanned([leadId], [saleId]);
    expect((await saleFlags(saleId)).fraudFlags).toEqual(["disposable_email"]);
  });
});

describe("the scan", () => {
  it("is idempotent: a second run changes neither flags nor scan times", async () => {
    const p = await createProgram();
    const device = newDevice();
    const a = await calmLead(p, device, `${unique("a")}@mailinator.com`);
    const b = await calmLead(p, device, `${unique("b")}@example.com`);
    await scanUntilScanned([a.leadId, b.leadId]);
    const before = await leadRows([a.leadId, b.leadId]);
    expect(before.map((r) => r.fraudFlags)).toEqual([["disposable_email"], ["partner_device"]]);
    await scanLeadSignals(db, new Date());
    await scanLeadSignals(db, new Date());
    expect(await leadRows([a.leadId, b.leadId])).toEqual(before);
  });

  it("two runs at once each take different leads, and every lead is scanned once with the same verdict", async () => {
    const p = await createProgram();
    const device = newDevice();
    const ids: number[] = [];
    for (let i = 0; i < 6; i++)
      ids.push((await calmLead(p, device, `${unique(`c${i}`)}@example.com`)).leadId);
    const runA = new Date(Date.now() - 1000);
    const runB = new Date(Date.now() - 2000);
    await Promise.all([scanLeadSignals(db, runA, 3), scanLeadSignals(db, runB, 3)]);
    await scanUntilScanned(ids);
    const rows = await leadRows(ids);
    // Six customers from one device of one partner: the partner's device from the second, too many
    // customers from one address from the fifth.
    expect(rows.map((r) => r.fraudFlags)).toEqual([
      [],
      ["partner_device"],
      ["partner_device"],
      ["partner_device"],
      ["ip_velocity", "partner_device"],
      ["ip_velocity", "partner_device"],
    ]);
    for (const row of rows) expect(row.fraudScannedAt).not.toBeNull();
    const again = await leadRows(ids);
    await Promise.all([scanLeadSignals(db, new Date()), scanLeadSignals(db, new Date())]);
    expect(await leadRows(ids)).toEqual(again);
  });
});
