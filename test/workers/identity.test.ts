import { env } from "cloudflare:workers";
import { eq, sql } from "drizzle-orm";
import { exportJWK, generateKeyPair, SignJWT } from "jose";
import { describe, expect, inject, it } from "vitest";
import { readConfig } from "../../lib/config/env.ts";
import { issuerKeys } from "../../lib/identity/issuer-keys.ts";
import { createKeySet } from "../../lib/identity/remote-key-set.ts";
import { resolvePerson } from "../../lib/identity/resolve-person.ts";
import { verifyIdToken } from "../../lib/identity/verify-id-token.ts";
import { advertisers, users, workspaceMembers } from "../../schema/index.ts";
import { ID_TOKEN_ALGORITHMS } from "../setup/jws-algorithms.ts";
import { db, unique } from "./harness.ts";
import { obtainIdToken, TEST_SIGN_IN_CALLBACK } from "./oidc-sign-in.ts";

const oidc = inject("oidc");
const identity = readConfig(env).identity!;

function dashboardToken(email: string, verified: boolean, nonce?: string) {
  return obtainIdToken(
    {
      issuer: oidc.issuer,
      clientId: oidc.clientId,
      clientSecret: oidc.clientSecret,
      redirectUri: TEST_SIGN_IN_CALLBACK,
      ...(nonce ? { nonce } : {}),
    },
    { email, verified },
  );
}

async function expectations(
  overrides: { nonce?: string; now?: Date; audience?: string; issuer?: string } = {},
) {
  return {
    issuer: overrides.issuer ?? identity.issuer,
    audience: overrides.audience ?? identity.clientId,
    keys: await issuerKeys(identity),
    now: overrides.now ?? new Date(),
    ...(overrides.nonce ? { nonce: overrides.nonce } : {}),
  };
}

describe("verifyIdToken against the local provider's real tokens", () => {
  it("accepts a fresh token and reads the email facts", async () => {
    const email = `${unique("v")}@people.example`;
    const token = await dashboardToken(email, true, "nonce-1");
    const verdict = await verifyIdToken(token, await expectations({ nonce: "nonce-1" }));
    expect(verdict).toEqual({
      ok: true,
      claims: { subject: expect.any(String), email, emailVerified: true },
    });
  });

  it.each([
    ["another audience", { audience: "someone-else" }, "invalid_id_token"],
    ["another issuer", { issuer: "https://issuer.example" }, "invalid_id_token"],
    ["another nonce", { nonce: "nonce-other" }, "nonce_mismatch"],
    ["expired (an hour later)", { now: new Date(Date.now() + 3_600_000) }, "expired_id_token"],
    ["issued in the future (beyond the skew)", { now: new Date(Date.now() - 300_000) }, "invalid_id_token"],
  ] as const)("refuses a token checked with %s", async (_case, overrides, reason) => {
    const token = await dashboardToken(`${unique("r")}@people.example`, true, "nonce-1");
    const verdict = await verifyIdToken(token, await expectations({ nonce: "nonce-1", ...overrides }));
    expect(verdict).toEqual({ ok: false, reason });
  });

  it("refuses a token whose payload was altered (signature)", async () => {
    const token = await dashboardToken(`${unique("t")}@people.example`, false);
    const [header, payload, signature] = token.split(".");
    const claims = JSON.parse(atob(payload!.replace(/-/g, "+").replace(/_/g, "/")));
    const forged = btoa(JSON.stringify({ ...claims, email_verified: true }))
      .replace(/\+/g, "-")
      .replace(/\//g, "_")
      .replace(/=+$/, "");
    const verdict = await verifyIdToken(`${header}.${forged}.${signature}`, await expectations());
    expect(verdict).toEqual({ ok: false, reason: "invalid_id_token" });
  });

  it("refuses the command-line client's token where the dashboard client is the audience", async () => {
    const token = await obtainIdToken(
      { issuer: oidc.issuer, clientId: oidc.cliClientId, redirectUri: "http://127.0.0.1:41234/callback" },
      { email: `${unique("c")}@people.example`, verified: true },
    );
    expect(await verifyIdToken(token, await expectations())).toEqual({
      ok: false,
      reason: "invalid_id_token",
    });
  });
});

// The local provider signs with RS256 only: the other algorithms' WebCrypto (import and verify) in workerd.
// test/node/id-token-signature.test.ts runs the same algorithms, and every refusal, in Node.
describe("verifyIdToken in workerd, every signing algorithm", () => {
  const algorithms = ID_TOKEN_ALGORITHMS;

  it.each(algorithms)("%s", async (alg) => {
    const { publicKey, privateKey } = await generateKeyPair(alg);
    const keys = createKeySet(async () => [{ ...(await exportJWK(publicKey)), kid: "k", alg }]);
    const token = await new SignJWT({ sub: "person-1", email: "a@b.example", email_verified: true })
      .setProtectedHeader({ alg, kid: "k" })
      .setIssuer(identity.issuer)
      .setAudience(identity.clientId)
      .setIssuedAt()
      .setExpirationTime("5m")
      .sign(privateKey);
    const expected = { issuer: identity.issuer, audience: identity.clientId, keys, now: new Date() };
    expect(await verifyIdToken(token, { ...expected, algorithms: [alg] })).toEqual({
      ok: true,
      claims: { subject: "person-1", email: "a@b.example", emailVerified: true },
    });
    const [header, payload, signature] = token.split(".");
    const flipped = `${signature!.startsWith("A") ? "B" : "A"}${signature!.slice(1)}`;
    expect(await verifyIdToken(`${header}.${payload}.${flipped}`, expected)).toEqual({
      ok: false,
      reason: "invalid_id_token",
    });
  });
});

async function userByEmail(email: string) {
  const [user] = await db.select().from(users).where(sql`lower(${users.email}) = lower(${email})`);
  return user;
}

async function membershipsOf(userId: number) {
  return db.select().from(workspaceMembers).where(eq(workspaceMembers.userId, userId));
}

describe("resolvePerson", () => {
  it("refuses an unverified provider email before looking at any account, and creates nothing", async () => {
    const email = `${unique("u")}@people.example`;
    expect(await resolvePerson(db, { subject: "s", email, emailVerified: false })).toEqual({
      ok: false,
      reason: "email_not_verified",
    });
    expect(await userByEmail(email)).toBeUndefined();
  });

  it("refuses an unverified email even for a blocked account (the email check comes first)", async () => {
    const email = `${unique("bu")}@people.example`;
    await db.insert(users).values({ email, emailVerified: true, blockedAt: new Date() });
    expect(await resolvePerson(db, { subject: "s", email, emailVerified: false })).toEqual({
      ok: false,
      reason: "email_not_verified",
    });
  });

  it("first sign-in of a new verified email creates the user and a workspace it owns; the next finds them", async () => {
    const email = `${unique("new")}@people.example`;
    const first = await resolvePerson(db, { subject: "s", email, emailVerified: true });
    expect(first).toEqual({ ok: true, userId: expect.any(Number), created: true });
    const user = await userByEmail(email);
    expect(user?.emailVerified).toBe(true);
    const memberships = await membershipsOf(user!.id);
    expect(memberships).toEqual([expect.objectContaining({ role: "owner", status: "active" })]);
    const again = await resolvePerson(db, { subject: "s", email: email.toUpperCase(), emailVerified: true });
    expect(again).toEqual({ ok: true, userId: user!.id, created: false });
    expect(await membershipsOf(user!.id)).toHaveLength(1);
  });

  it("refuses a blocked account", async () => {
    const email = `${unique("b")}@people.example`;
    await db.insert(users).values({ email, emailVerified: true, blockedAt: new Date() });
    expect(await resolvePerson(db, { subject: "s", email, emailVerified: true })).toEqual({
      ok: false,
      reason: "account_blocked",
    });
  });

  it("an existing person who is a member elsewhere gets no extra workspace; one with none gets one", async () => {
    const [workspace] = await db
      .insert(advertisers)
      .values({ name: unique("ws") })
      .returning();
    const memberEmail = `${unique("m")}@people.example`;
    const [member] = await db.insert(users).values({ email: memberEmail }).returning();
    await db
      .insert(workspaceMembers)
      .values({ advertiserId: workspace!.id, userId: member!.id, role: "member" });
    await resolvePerson(db, { subject: "s", email: memberEmail, emailVerified: true });
    expect(await membershipsOf(member!.id)).toHaveLength(1);
    expect((await userByEmail(memberEmail))?.emailVerified).toBe(true);

    const loneEmail = `${unique("l")}@people.example`;
    const [lone] = await db.insert(users).values({ email: loneEmail, emailVerified: true }).returning();
    await resolvePerson(db, { subject: "s", email: loneEmail, emailVerified: true });
    expect(await membershipsOf(lone!.id)).toEqual([expect.objectContaining({ role: "owner" })]);
  });

  it("two concurrent first sign-ins of one email make one user", async () => {
    const email = `${unique("race")}@people.example`;
    const results = await Promise.all(
      [1, 2, 3].map(() => resolvePerson(db, { subject: "s", email, emailVerified: true })),
    );
    const ids = new Set(results.map((r) => (r.ok ? r.userId : 0)));
    expect(ids.size).toBe(1);
  });
});
