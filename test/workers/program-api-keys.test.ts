import { and, desc, eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { sha256Hex } from "../../lib/auth/api-keys.ts";
import { PROGRAM_ACCESS_REFUSED } from "../../lib/auth/require-program-membership.ts";
import { auditLog, programApiKeys } from "../../schema/index.ts";
import { call } from "./dashboard-sign-in.ts";
import { db } from "./harness.ts";
import { addMember, ownerWithProgram, platform, signedInPerson } from "./program-admin-harness.ts";

const regeneratePath = (id: number) => `/api/v1/programs/${id}/api-keys/regenerate`;
const readiness = (key: string) => call("GET", "/api/v1/programs/me/readiness", { token: key });
const inDays = (days: number) => new Date(Date.now() + days * 86_400_000).toISOString();

describe("POST /api/v1/programs/:id/api-keys/regenerate", () => {
  it("immediate: the new key is shown once, the old one stops at once, settings show it masked", async () => {
    const owner = await ownerWithProgram();
    expect((await readiness(owner.apiKey)).status).toBe(200);
    const response = await call("POST", regeneratePath(owner.programId), {
      token: owner.token,
      body: { mode: "immediate" },
    });
    expect(response.status).toBe(200);
    const fresh = response.body.data.api_key as string;
    expect(fresh).toMatch(/^sk_live_[A-Za-z0-9_-]{32}$/);
    expect(response.body.data).toMatchObject({
      key: "live",
      mode: "immediate",
      masked: `${fresh.slice(0, 12)}...${fresh.slice(-4)}`,
      previous: [
        {
          masked: `${owner.apiKey.slice(0, 12)}...${owner.apiKey.slice(-4)}`,
          revoked_at: expect.any(String),
          rotate_by: null,
        },
      ],
    });
    const old = await readiness(owner.apiKey);
    expect(old.status).toBe(401);
    expect(old.body.error.code).toBe("invalid_key");
    expect((await readiness(fresh)).status).toBe(200);
    // The test key was not touched.
    expect((await readiness(owner.testApiKey)).status).toBe(200);

    const settings = await call("GET", `/api/v1/programs/${owner.programId}/settings`, {
      token: owner.token,
    });
    expect(settings.body.data.api_key).toBe(`${fresh.slice(0, 12)}...${fresh.slice(-4)}`);
    expect(JSON.stringify(settings.body)).not.toContain(fresh);
    const [entry] = await db
      .select()
      .from(auditLog)
      .where(and(eq(auditLog.programId, owner.programId), eq(auditLog.action, "program.api_key_regenerated")))
      .orderBy(desc(auditLog.id));
    expect(entry?.actorUserId).toBe(owner.userId);
    expect(entry?.changes).toMatchObject({ api_key: { to: `${fresh.slice(0, 12)}...${fresh.slice(-4)}` } });
    expect(JSON.stringify(entry?.changes)).not.toContain(fresh);
  });

  it("rotate: the old key keeps working with Deprecation, Sunset and warnings until the deadline, then 401", async () => {
    const owner = await ownerWithProgram();
    const deadline = inDays(14);
    const response = await call("POST", regeneratePath(owner.programId), {
      token: owner.token,
      body: { mode: "rotate", rotate_by: deadline },
    });
    expect(response.status).toBe(200);
    expect(response.body.data.previous[0]).toMatchObject({ revoked_at: null, rotate_by: deadline });
    const old = await readiness(owner.apiKey);
    expect(old.status).toBe(200);
    expect(old.headers.get("Deprecation")).toMatch(/^@\d+$/);
    expect(old.headers.get("Sunset")).toBe(new Date(deadline).toUTCString());
    expect(old.body.warnings[0]).toMatchObject({ code: "api_key_rotation_required", rotate_by: deadline });
    const fresh = await readiness(response.body.data.api_key);
    expect(fresh.status).toBe(200);
    expect(fresh.headers.get("Deprecation")).toBeNull();
    const masked = (key: string) => `${key.slice(0, 12)}...${key.slice(-4)}`;
    const liveKeysInSettings = async () => {
      const settings = await call("GET", `/api/v1/programs/${owner.programId}/settings`, {
        token: owner.token,
      });
      const keys = settings.body.data.api_keys as {
        mode: string;
        masked: string;
        rotate_by: string | null;
      }[];
      return keys.filter((key) => key.mode === "live");
    };
    // Both keys are in use until the deadline: the settings list both.
    expect(await liveKeysInSettings()).toEqual([
      expect.objectContaining({ masked: masked(response.body.data.api_key), rotate_by: null }),
      expect.objectContaining({ masked: masked(owner.apiKey), rotate_by: deadline }),
    ]);

    // The deadline passes.
    await db
      .update(programApiKeys)
      .set({ rotateBy: new Date(Date.now() - 1000) })
      .where(eq(programApiKeys.keyHash, await sha256Hex(owner.apiKey)));
    const retired = await readiness(owner.apiKey);
    expect(retired.status).toBe(401);
    expect(retired.body.error.code).toBe("api_key_rotation_required");
    // A retired key is no key of the program any more: the settings list only the new one.
    expect(await liveKeysInSettings()).toEqual([
      expect.objectContaining({ masked: masked(response.body.data.api_key), rotate_by: null }),
    ]);
  });

  it("test keys likewise, and only the test key", async () => {
    const owner = await ownerWithProgram();
    const response = await call("POST", regeneratePath(owner.programId), {
      token: owner.token,
      body: { key: "test", mode: "immediate" },
    });
    expect(response.status).toBe(200);
    expect(response.body.data.api_key).toMatch(/^sk_test_/);
    expect((await readiness(owner.testApiKey)).status).toBe(401);
    expect((await readiness(owner.apiKey)).status).toBe(200);
  });

  it("two regenerations at once leave exactly one current key", async () => {
    const owner = await ownerWithProgram();
    const answers = await Promise.all(
      [1, 2].map(() =>
        call("POST", regeneratePath(owner.programId), { token: owner.token, body: { mode: "immediate" } }),
      ),
    );
    expect(answers.map((a) => a.status)).toEqual([200, 200]);
    const working = await Promise.all(answers.map((a) => readiness(a.body.data.api_key)));
    expect(working.map((w) => w.status).sort()).toEqual([200, 401]);
  });

  const refusals: [string, "owner" | "admin" | "member" | "stranger", unknown, number, string][] = [
    ["a member", "member", { mode: "immediate" }, 403, "Only a workspace owner can regenerate API keys"],
    ["an admin", "admin", { mode: "immediate" }, 403, "Only a workspace owner can regenerate API keys"],
    ["another workspace", "stranger", { mode: "immediate" }, 403, PROGRAM_ACCESS_REFUSED],
    ["no mode", "owner", {}, 400, "mode must be immediate or rotate"],
    ["an unknown key kind", "owner", { key: "prod", mode: "immediate" }, 400, "key must be live or test"],
    [
      "rotate without a deadline",
      "owner",
      { mode: "rotate" },
      400,
      "rotate_by must be an ISO 8601 time with offset, after now and at most 90 days ahead",
    ],
    [
      "a deadline in the past",
      "owner",
      { mode: "rotate", rotate_by: "2020-01-01T00:00:00Z" },
      400,
      "rotate_by must be an ISO 8601 time with offset, after now and at most 90 days ahead",
    ],
    [
      "a deadline too far",
      "owner",
      { mode: "rotate", rotate_by: inDays(91) },
      400,
      "rotate_by must be an ISO 8601 time with offset, after now and at most 90 days ahead",
    ],
    [
      "a deadline with immediate",
      "owner",
      { mode: "immediate", rotate_by: inDays(1) },
      400,
      "rotate_by is only for mode rotate",
    ],
    [
      "an unknown field",
      "owner",
      { mode: "immediate", now: true },
      400,
      "Unknown field: now. Valid: key, mode, rotate_by",
    ],
  ];
  it.each(refusals)("refuses %s", async (_, who, body, status, message) => {
    const owner = await ownerWithProgram();
    let token = owner.token;
    if (who !== "owner") {
      const person = await signedInPerson();
      if (who !== "stranger") await addMember(owner.advertiserId, person.userId, who);
      token = person.token;
    }
    const response = await call("POST", regeneratePath(owner.programId), { token, body });
    expect(response.status).toBe(status);
    expect(response.body).toEqual(platform(status, message));
    expect((await readiness(owner.apiKey)).status).toBe(200);
  });
});
