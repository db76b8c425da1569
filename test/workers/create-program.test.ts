import { eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { sha256Hex } from "../../lib/auth/api-keys.ts";
import { createProgram } from "../../lib/programs/create-program.ts";
import {
  advertisers,
  auditLog,
  programApiKeys,
  programs,
  users,
  workspaceMembers,
} from "../../schema/index.ts";
import { db, unique } from "./harness.ts";

const fields = {
  name: "Acme",
  domain: "acme.example",
  commissionType: "percent" as const,
  commissionRate: "20",
  durationMonths: 0,
  attributionWindowDays: 30,
};

async function person(role: "owner" | "admin" | "member" | null, status: "active" | "removed" = "active") {
  const [user] = await db
    .insert(users)
    .values({ email: `${unique("p")}@people.example`, emailVerified: true })
    .returning();
  const [workspace] = await db
    .insert(advertisers)
    .values({ name: unique("ws") })
    .returning();
  if (role)
    await db.insert(workspaceMembers).values({ advertiserId: workspace!.id, userId: user!.id, role, status });
  return { userId: user!.id, advertiserId: workspace!.id };
}

describe("createProgram", () => {
  it("creates the program in the caller's workspace with a live and a test key stored only as hashes", async () => {
    const owner = await person("owner");
    const result = await createProgram(db, { userId: owner.userId, fields });
    if (!result.ok) throw new Error(result.reason);
    expect(result.apiKey).toMatch(/^sk_live_/);
    expect(result.testApiKey).toMatch(/^sk_test_/);
    const [program] = await db.select().from(programs).where(eq(programs.id, result.programId));
    expect(program).toMatchObject({
      advertiserId: owner.advertiserId,
      attributionWindowDays: 30,
      leadAuthPolicy: "server_required",
    });
    const keys = await db.select().from(programApiKeys).where(eq(programApiKeys.programId, result.programId));
    expect(keys.map((k) => k.keyHash).sort()).toEqual(
      [await sha256Hex(result.apiKey), await sha256Hex(result.testApiKey)].sort(),
    );
    expect(JSON.stringify(keys)).not.toContain(result.apiKey);
    const audit = await db.select().from(auditLog).where(eq(auditLog.programId, result.programId));
    expect(audit).toEqual([
      expect.objectContaining({ action: "program.created", actorUserId: owner.userId }),
    ]);
  });

  it.each([
    ["no workspace at all", null, undefined, "no_advertiser"],
    ["only a member (not owner or admin)", "member", undefined, "no_advertiser"],
    ["a removed owner", "owner", undefined, "no_advertiser"],
  ] as const)("refuses a caller with %s", async (_case, role, _unused, reason) => {
    const caller = await person(role, _case === "a removed owner" ? "removed" : "active");
    expect(await createProgram(db, { userId: caller.userId, fields })).toEqual({ ok: false, reason });
  });

  it("refuses another workspace's advertiser id and accepts the caller's own", async () => {
    const admin = await person("admin");
    const other = await person("owner");
    expect(
      await createProgram(db, { userId: admin.userId, advertiserId: other.advertiserId, fields }),
    ).toEqual({
      ok: false,
      reason: "advertiser_mismatch",
    });
    const own = await createProgram(db, { userId: admin.userId, advertiserId: admin.advertiserId, fields });
    expect(own).toMatchObject({ ok: true, advertiserId: admin.advertiserId });
  });
});
