import { and, eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { cliSyntheticChains } from "../../schema/cli-login.ts";
import { clickEvents, leadEvents, saleEvents } from "../../schema/events.ts";
import { cli } from "./cli-harness.ts";
import { clicksOfProgram, createProgram, db, postJson } from "./harness.ts";

const testEvent = (key: string, body: unknown) => cli("POST", "/api/v1/cli/test-event", { token: key, body });
const status = (key: string) => cli("GET", "/api/v1/cli/status", { token: key });

describe("command-line status and test events", () => {
  it("status starts unverified; test click, lead and sale each count; then it is verified", async () => {
    const p = await createProgram();
    const first = await status(p.apiKey);
    expect(first.status).toBe(200);
    expect(first.headers.get("X-Request-ID")).toBeNull();
    expect(first.headers.get("X-RateLimit-Limit")).toBe("60");
    const data = first.body.data as Record<string, unknown>;
    expect(data).toMatchObject({
      program: { id: p.programId },
      key_mode: "live",
      verified: false,
      steps: {
        click: { live: false, test: false, last_at: null },
        lead: { live: false, test: false, last_at: null },
        sale: { live: false, test: false, last_at: null },
      },
    });
    expect(data.next_step).toContain("affiliate-tracking-service test click");

    for (const type of ["click", "lead", "sale"] as const) {
      const answer = await testEvent(p.apiKey, { event_type: type });
      expect(answer.status).toBe(200);
      expect(answer.headers.get("X-Request-ID")).toMatch(/^req_/);
      expect(answer.body).toMatchObject({
        success: true,
        data: {
          type: "event",
          program_id: p.programId,
          test_mode: true,
          step: { step: type, ok: true, status: 200 },
        },
      });
    }
    const [click] = await db.select().from(clickEvents).where(eq(clickEvents.programId, p.programId));
    expect(click).toMatchObject({ isTest: true });
    const [lead] = await db.select().from(leadEvents).where(eq(leadEvents.programId, p.programId));
    expect(lead).toMatchObject({ isTest: true, viaApiKey: true });
    const [sale] = await db.select().from(saleEvents).where(eq(saleEvents.programId, p.programId));
    expect(sale).toMatchObject({ isTest: true });

    const after = (await status(p.testApiKey)).body.data as Record<string, unknown>;
    expect(after).toMatchObject({
      key_mode: "test",
      verified: true,
      next_step: null,
      steps: { click: { test: true, live: false }, lead: { test: true }, sale: { test: true } },
    });
  });

  it("a chain reports each step with its id; the eleventh in an hour is refused with the typed 429", async () => {
    const p = await createProgram();
    const chain = await testEvent(p.apiKey, { type: "chain" });
    expect(chain.status).toBe(200);
    const data = chain.body.data as { ok: boolean; steps: { step: string; ok: boolean; id: unknown }[] };
    expect(data.ok).toBe(true);
    expect(data.steps.map((s) => [s.step, s.ok])).toEqual([
      ["click", true],
      ["lead", true],
      ["sale", true],
    ]);
    expect(data.steps[0]!.id).toMatch(/^clk_/);
    expect(typeof data.steps[1]!.id).toBe("number");
    expect(typeof data.steps[2]!.id).toBe("number");
    for (let i = 2; i <= 10; i++) expect((await testEvent(p.apiKey, { type: "chain" })).status).toBe(200);
    const eleventh = await testEvent(p.apiKey, { type: "chain" });
    expect(eleventh.status).toBe(429);
    expect(eleventh.body).toEqual({
      error: {
        code: "rate_limited",
        message: "Too many synthetic chains (max 10/program/hour).",
        status: 429,
        retry_after_seconds: expect.any(Number),
      },
    });
    const wait = (eleventh.body.error as { retry_after_seconds: number }).retry_after_seconds;
    expect(wait).toBeGreaterThan(3500);
    expect(wait).toBeLessThanOrEqual(3600);
    expect(eleventh.headers.get("Retry-After")).toBe(String(wait));
    expect(eleventh.headers.get("X-Request-ID")).toMatch(/^req_/);
    // The cap is per program: another program still runs chains; test events are not capped.
    expect((await testEvent(p.apiKey, { event_type: "click" })).status).toBe(200);
    const other = await createProgram();
    expect((await testEvent(other.apiKey, { type: "chain" })).status).toBe(200);
    // An hour later the slot is free again.
    await db
      .update(cliSyntheticChains)
      .set({ startedAt: new Date(Date.now() - 3_601_000) })
      .where(and(eq(cliSyntheticChains.programId, p.programId)));
    expect((await testEvent(p.apiKey, { type: "chain" })).status).toBe(200);
  });

  it("the verification link takes test clicks only: a live click on it is refused as an unknown link", async () => {
    const p = await createProgram();
    expect((await testEvent(p.apiKey, { type: "chain" })).status).toBe(200);
    const affiliate_url = `https://shop.example/?aff=synthetic-verify-p${p.programId}`;
    const before = (await clicksOfProgram(p.programId)).length;
    for (const body of [
      { affiliate_url },
      { affiliate_url, program_id: p.programId },
      { affiliate_url, additional_data: { test_mode: false } },
    ]) {
      const live = await postJson("/api/v1/track/click", body);
      expect(live.status, JSON.stringify(body)).toBe(400);
      expect(live.body).toEqual({
        data: null,
        error: { status: 400, name: "BadRequestError", message: "Referral link not found", details: {} },
      });
    }
    expect(await clicksOfProgram(p.programId)).toHaveLength(before);
    // A test click on it, as the chain sends, is recorded.
    const test = await postJson("/api/v1/track/click", {
      affiliate_url,
      additional_data: { test_mode: true, program_id: p.programId },
    });
    expect(test.status).toBe(200);
    expect(await clicksOfProgram(p.programId)).toHaveLength(before + 1);
  });

  it("the verification link is refreshed when it was turned off", async () => {
    const p = await createProgram();
    expect((await testEvent(p.apiKey, { event_type: "click" })).status).toBe(200);
    const { referralLinks } = await import("../../schema/partners.ts");
    await db
      .update(referralLinks)
      .set({ isActive: false, disabledAt: new Date() })
      .where(eq(referralLinks.shortLink, `synthetic-verify-p${p.programId}`));
    const again = await testEvent(p.apiKey, { event_type: "click" });
    expect(again.body).toMatchObject({ data: { step: { ok: true, status: 200 } } });
  });
});
