import { eq } from "drizzle-orm";
import { describe, expect, inject, it } from "vitest";
import { cliSyntheticChains, programApiKeys } from "../../schema/index.ts";
import { anotherToken, call, programOf, signInPerson } from "./dashboard-tracking-helpers.ts";
import { db } from "./harness.ts";

/**
 * Runs only with DATABASE_URL (a real multi-connection PostgreSQL; PGlite is one session and would
 * serialise the requests). Verification runs started at once from the dashboard must still respect the
 * program's 10 chains an hour, and every run's own key must be gone afterwards.
 */
describe("concurrent dashboard verification runs (PostgreSQL)", () => {
  it("with 8 of 10 chains used, 5 at once: two run, three 429, no key left behind", async () => {
    expect(inject("databaseBackend")).toBe("postgres");
    const person = await signInPerson();
    const p = await programOf(person);
    const startedAt = new Date(Date.now() - 10 * 60_000);
    await db
      .insert(cliSyntheticChains)
      .values(Array.from({ length: 8 }, () => ({ programId: p.programId, startedAt })));
    const tokens = await Promise.all(Array.from({ length: 5 }, () => anotherToken(person)));
    const responses = await Promise.all(
      tokens.map((token) => call("POST", `/api/tracking/run-verification/${p.programId}`, { token })),
    );
    expect(responses.map((r) => r.status).sort()).toEqual([200, 200, 429, 429, 429]);
    for (const ran of responses.filter((r) => r.status === 200)) expect(ran.body.data.ok).toBe(true);
    for (const capped of responses.filter((r) => r.status === 429)) {
      expect(capped.body.error).toMatchObject({
        code: "rate_limited",
        message: "Too many synthetic chains (max 10/program/hour).",
      });
    }
    const chains = await db
      .select()
      .from(cliSyntheticChains)
      .where(eq(cliSyntheticChains.programId, p.programId));
    expect(chains).toHaveLength(10);
    const keys = await db.select().from(programApiKeys).where(eq(programApiKeys.programId, p.programId));
    expect(keys).toHaveLength(2);
  });
});
