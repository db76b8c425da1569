import { env } from "cloudflare:workers";
import { eq, sql } from "drizzle-orm";
import { afterEach, describe, expect, it } from "vitest";
import eventsWorker from "../../functions/stripe-events/index.ts";
import { sha256Hex } from "../../lib/auth/api-keys.ts";
import { partners, programPartners, programs, referralLinks } from "../../schema/index.ts";
import { checkoutSession, event, signatureFor } from "../stripe-events/stripe-harness.ts";
import { call } from "./dashboard-sign-in.ts";
import { db, postJson, unique } from "./harness.ts";
import { ownerWithProgram } from "./program-admin-harness.ts";

/**
 * Spec section 5 (secrets and personal data): a full run (sign-in, click, lead with an email, sale, partial
 * refund, a signed provider event carrying a buyer's email, a key regenerate) while everything the workers
 * write to the console (lib/log.ts is the only logger) is captured; the capture holds none of the keys,
 * sign-in tokens, emails, customer keys or click ids used. Keys and sign-in tokens are stored only as SHA-256
 * hashes. (Raw provider payload retention: test/workers/payload-retention.test.ts.)
 *
 * The API and tracking workers (SELF) and the events worker (its default export, called in-process) run in
 * this isolate, so wrapping the console here sees every line they log.
 */
const webhookSecret = "whsec_log_scan_0123456789abcdef";
const captured: string[] = [];
const original = { log: console.log, error: console.error, warn: console.warn, info: console.info };

function capture(): void {
  for (const level of ["log", "error", "warn", "info"] as const) {
    console[level] = (...args: unknown[]) => {
      captured.push(args.map((a) => (typeof a === "string" ? a : JSON.stringify(a))).join(" "));
      original[level](...args);
    };
  }
}

afterEach(() => {
  Object.assign(console, original);
});

async function deliverEvent(payload: unknown): Promise<Response> {
  const body = JSON.stringify(payload);
  const request = new Request("https://events.test/webhooks/stripe", {
    method: "POST",
    headers: {
      "Content-Type": "application/json",
      "Stripe-Signature": await signatureFor(body, webhookSecret),
    },
    body,
  });
  return eventsWorker.fetch(request as Parameters<typeof eventsWorker.fetch>[0], {
    ...env,
    STRIPE_WEBHOOK_SECRET: webhookSecret,
  });
}

describe("secrets and personal data stay out of the logs", () => {
  it("a full run logs no key, token, email, customer key or click id; keys and tokens are stored hashed", async () => {
    capture();
    const owner = await ownerWithProgram();
    const accountId = `acct_${unique("logs").replace(/-/g, "")}`;
    await db.update(programs).set({ stripeAccountId: accountId }).where(eq(programs.id, owner.programId));
    const [partner] = await db
      .insert(partners)
      .values({ name: "Log partner", email: `${unique("partner")}@partners.example` })
      .returning();
    await db.insert(programPartners).values({ programId: owner.programId, partnerId: partner!.id });
    const code = unique("logs");
    await db
      .insert(referralLinks)
      .values({ programId: owner.programId, partnerId: partner!.id, shortLink: code });
    const auth = { Authorization: `Bearer ${owner.apiKey}` };

    const click = await postJson("/api/v1/track/click", {
      affiliate_url: `https://shop.example.com/?aff=${code}`,
    });
    const clickId = click.body.click_id as string;
    const email = `${unique("lead")}@buyers.example`;
    const customerKey = unique("customer");
    const lead = await postJson(
      "/api/v1/track/lead",
      { click_id: clickId, customer_key: customerKey, email },
      auth,
    );
    const transactionId = unique("txn");
    const sale = await postJson(
      "/api/v1/track/sale",
      { transaction_id: transactionId, amount_cents: 9_900, customer_key: customerKey },
      auth,
    );
    const refund = await postJson(
      "/api/v1/track/refund",
      { transaction_id: transactionId, amount_cents: 900 },
      auth,
    );
    // A second visitor pays through the provider: the event carries the buyer's email and the click.
    const secondClick = await postJson("/api/v1/track/click", {
      affiliate_url: `https://shop.example.com/?aff=${code}`,
    });
    const secondClickId = secondClick.body.click_id as string;
    const buyerEmail = `${unique("buyer")}@buyers.example`;
    const provider = await deliverEvent(
      event(
        "checkout.session.completed",
        checkoutSession({ email: buyerEmail, metadata: { service_click_id: secondClickId } }),
        { account: accountId },
      ),
    );
    const regenerated = await call("POST", `/api/v1/programs/${owner.programId}/api-keys/regenerate`, {
      token: owner.token,
      body: { mode: "immediate" },
    });
    const bad = await postJson(
      "/api/v1/track/sale",
      { transaction_id: transactionId, amount_cents: 1 },
      auth,
    );

    expect([click.status, lead.status, sale.status, refund.status, secondClick.status]).toEqual([
      200, 200, 200, 200, 200,
    ]);
    expect(provider.status).toBe(200);
    expect(regenerated.status).toBe(200);
    expect(bad.status).toBe(401);
    const newKey = regenerated.body.data.api_key as string;

    const secrets: Record<string, string> = {
      "old live key": owner.apiKey,
      "test key": owner.testApiKey,
      "new live key": newKey,
      "sign-in token": owner.token,
      "lead email": email,
      "buyer email": buyerEmail,
      "customer key": customerKey,
      "click id": clickId,
      "provider click id": secondClickId,
    };
    // The capture saw both workers' lines (the service logs ids and outcomes, little on success).
    const messages = captured.map((line) => (JSON.parse(line) as { msg: string }).msg);
    expect(messages).toEqual(
      expect.arrayContaining(["signed in", "sale recorded", "program api key regenerated"]),
    );
    const log = captured.join("\n");
    const leaked = Object.entries(secrets)
      .filter(([, value]) => log.includes(value))
      .map(([name]) => name);
    expect(leaked).toEqual([]);

    // Keys and sign-in tokens are stored only as their SHA-256 hashes.
    const keys = await db.execute<Record<string, unknown>>(
      sql`select * from program_api_keys where program_id = ${owner.programId}`,
    );
    const keyRows = JSON.stringify(keys.rows);
    for (const key of [owner.apiKey, owner.testApiKey, newKey]) {
      expect(keyRows).not.toContain(key);
      expect(keyRows).toContain(await sha256Hex(key));
    }
    const tokens = await db.execute<Record<string, unknown>>(
      sql`select * from sign_in_tokens where user_id = ${owner.userId}`,
    );
    expect(JSON.stringify(tokens.rows)).not.toContain(owner.token);
    expect(JSON.stringify(tokens.rows)).toContain(await sha256Hex(owner.token));
  });
});
