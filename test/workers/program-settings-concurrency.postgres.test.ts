import { and, eq, isNull } from "drizzle-orm";
import { describe, expect, inject, it } from "vitest";
import { auditLog, programApiKeys, programs, referralLinks } from "../../schema/index.ts";
import { call } from "./dashboard-sign-in.ts";
import { db, unique } from "./harness.ts";
import { ownerWithProgram } from "./program-admin-harness.ts";

/**
 * Runs only with DATABASE_URL (a real multi-connection PostgreSQL; PGlite is one session and would
 * serialise the requests). Settings writes are guarded on the program's version, key regeneration takes a
 * per-program lock, and a short_link is decided by its unique index.
 */
describe("program settings under concurrency (PostgreSQL)", () => {
  it("8 PATCHes of different fields at once: all land, 8 audit entries, no change lost", async () => {
    expect(inject("databaseBackend")).toBe("postgres");
    const owner = await ownerWithProgram();
    const bodies = [
      { hold_days: 7 },
      { attribution_window_days: 30 },
      { duration_months: 6 },
      { lead_auth_policy: "browser_allowed" },
      { allowed_origins: ["https://race.example"] },
      { name: "Raced" },
      { domain: "race.example" },
      { commission_rate: 33 },
    ];
    const answers = await Promise.all(
      bodies.map((body) =>
        call("PATCH", `/api/v1/programs/${owner.programId}/settings`, { token: owner.token, body }),
      ),
    );
    expect(answers.map((a) => a.status)).toEqual(bodies.map(() => 200));
    const [row] = await db.select().from(programs).where(eq(programs.id, owner.programId));
    expect(row).toMatchObject({
      holdDays: 7,
      attributionWindowDays: 30,
      durationMonths: 6,
      leadAuthPolicy: "browser_allowed",
      allowedOrigins: ["https://race.example"],
      name: "Raced",
      domain: "race.example",
    });
    expect(Number(row?.commissionRate)).toBe(33);
    const audit = await db
      .select()
      .from(auditLog)
      .where(and(eq(auditLog.programId, owner.programId), eq(auditLog.action, "program.settings_changed")));
    expect(audit).toHaveLength(8);
  });

  it("5 immediate regenerations at once leave exactly one live key", async () => {
    const owner = await ownerWithProgram();
    const answers = await Promise.all(
      Array.from({ length: 5 }, () =>
        call("POST", `/api/v1/programs/${owner.programId}/api-keys/regenerate`, {
          token: owner.token,
          body: { mode: "immediate" },
        }),
      ),
    );
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 200, 200]);
    const live = await db
      .select()
      .from(programApiKeys)
      .where(
        and(
          eq(programApiKeys.programId, owner.programId),
          eq(programApiKeys.isTest, false),
          isNull(programApiKeys.revokedAt),
        ),
      );
    expect(live).toHaveLength(1);
  });

  it("the same short_link 6 times at once: one 201, five 409, one row", async () => {
    const owner = await ownerWithProgram();
    const partner = await call("POST", `/api/v1/programs/${owner.programId}/partners`, {
      token: owner.token,
      body: { name: "Racer", email: `${unique("racer")}@partners.example` },
    });
    const code = unique("race");
    const answers = await Promise.all(
      Array.from({ length: 6 }, () =>
        call("POST", `/api/v1/programs/${owner.programId}/links`, {
          token: owner.token,
          body: { partner_id: partner.body.data.partner.id, short_link: code },
        }),
      ),
    );
    expect(answers.map((a) => a.status).sort()).toEqual([201, 409, 409, 409, 409, 409]);
    expect(await db.select().from(referralLinks).where(eq(referralLinks.shortLink, code))).toHaveLength(1);
  });
});
