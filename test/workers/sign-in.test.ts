import { SELF } from "cloudflare:test";
import { eq, sql } from "drizzle-orm";
import { describe, expect, inject, it } from "vitest";
import { sha256Hex } from "../../lib/auth/api-keys.ts";
import { oauthStates } from "../../schema/accounts.ts";
import { users } from "../../schema/index.ts";
import {
  BASE,
  call,
  dashboardSignIn,
  type LooseJson,
  setCookies,
  signedInCookie,
} from "./dashboard-sign-in.ts";
import { db, unique } from "./harness.ts";
import { signInAtProvider } from "./oidc-sign-in.ts";

const email = () => `${unique("person")}@people.example`;

describe("dashboard sign-in through the local OpenID provider", () => {
  it("start redirects with state, nonce and PKCE; the callback sets a __Host- HttpOnly Secure cookie", async () => {
    const start = await SELF.fetch(`${BASE}/api/v1/auth/sign-in`, { redirect: "manual" });
    expect(start.status).toBe(302);
    const location = new URL(start.headers.get("Location") ?? "");
    for (const param of ["state", "nonce", "code_challenge"])
      expect(location.searchParams.get(param)).toBeTruthy();
    expect(location.searchParams.get("code_challenge_method")).toBe("S256");
    expect(location.searchParams.get("redirect_uri")).toBe(`${BASE}/api/v1/auth/callback`);

    const person = email();
    const response = await dashboardSignIn({ email: person, verified: true });
    expect(response.status).toBe(303);
    expect(response.headers.get("Location")).toBe("/dashboard");
    const line =
      (response.headers as LooseJson)
        .getSetCookie?.()
        .find((l: string) => l.startsWith("__Host-affiliate_session=")) ?? "";
    expect(line).toMatch(/HttpOnly/);
    expect(line).toMatch(/Secure/);
    expect(line).toMatch(/SameSite=Lax/);
    expect(line).toMatch(/Path=\//);
    const token = setCookies(response).get("__Host-affiliate_session")!;
    expect(token).toMatch(/^dst_[A-Za-z0-9_-]{43}$/);

    const session = await call("GET", "/api/v1/auth/session", { cookie: token });
    expect(session.status).toBe(200);
    expect(session.body.data.user.email).toBe(person);
    expect(session.body.data.workspaces).toEqual([expect.objectContaining({ role: "owner" })]);
  });

  it("refuses an unverified provider email (403, PROVIDER_EMAIL_NOT_VERIFIED) and creates no account", async () => {
    const person = email();
    const response = await dashboardSignIn({ email: person, verified: false });
    expect(response.status).toBe(403);
    expect(await response.json()).toEqual({
      data: null,
      error: {
        status: 403,
        name: "ForbiddenError",
        message:
          "Your email address is not verified with your sign-in provider. Verify it there, then try again.",
        details: { code: "PROVIDER_EMAIL_NOT_VERIFIED" },
      },
    });
    const found = await db.select().from(users).where(sql`lower(${users.email}) = lower(${person})`);
    expect(found).toEqual([]);
  });

  it("refuses a blocked account (403, ACCOUNT_BLOCKED)", async () => {
    const person = email();
    await db.insert(users).values({ email: person, emailVerified: true, blockedAt: new Date() });
    const response = await dashboardSignIn({ email: person, verified: true });
    expect(response.status).toBe(403);
    expect(await response.json()).toEqual({
      data: null,
      error: {
        status: 403,
        name: "ForbiddenError",
        message: "Your account has been suspended.",
        details: { code: "ACCOUNT_BLOCKED" },
      },
    });
  });

  it("shows a browser its refusal as a page, not the JSON envelope", async () => {
    const browser = { Accept: "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8" };
    const blocked = email();
    await db.insert(users).values({ email: blocked, emailVerified: true, blockedAt: new Date() });
    for (const [identity, message] of [
      [{ email: blocked, verified: true }, "Your account has been suspended."],
      [
        { email: email(), verified: false },
        "Your email address is not verified with your sign-in provider. Verify it there, then try again.",
      ],
    ] as const) {
      const response = await dashboardSignIn(identity, browser);
      expect(response.status).toBe(403);
      expect(response.headers.get("Content-Type")).toMatch(/^text\/html/);
      expect(response.headers.get("Content-Security-Policy")).toContain("default-src 'none'");
      const page = await response.text();
      expect(page).toContain("<h1>Not signed in</h1>");
      expect(page).toContain(`<p>${message}</p>`);
      expect(page).toContain('href="/dashboard"');
      expect(setCookies(response).has("__Host-affiliate_session")).toBe(false);
    }
    // A state this browser did not start (a replayed or stale link): the same page, with its 400.
    const stale = await SELF.fetch(`${BASE}/api/v1/auth/callback?state=stale&code=stale`, {
      redirect: "manual",
      headers: browser,
    });
    expect(stale.status).toBe(400);
    expect(await stale.text()).toContain("Sign-in expired or was started in another browser. Start again.");
  });

  it("refuses a callback without the state cookie of the browser that started (login CSRF), and a replay", async () => {
    const start = await SELF.fetch(`${BASE}/api/v1/auth/sign-in`, { redirect: "manual" });
    const state = setCookies(start).get("__Host-affiliate_sign_in_state")!;
    const back = await signInAtProvider(start.headers.get("Location")!, { email: email(), verified: true });
    const withoutCookie = await SELF.fetch(back.href, { redirect: "manual" });
    expect(withoutCookie.status).toBe(400);
    expect(((await withoutCookie.json()) as LooseJson).error.message).toBe(
      "Sign-in expired or was started in another browser. Start again.",
    );
    const first = await SELF.fetch(back.href, {
      redirect: "manual",
      headers: { Cookie: `__Host-affiliate_sign_in_state=${state}` },
    });
    expect(first.status).toBe(303);
    const replay = await SELF.fetch(back.href, {
      redirect: "manual",
      headers: { Cookie: `__Host-affiliate_sign_in_state=${state}` },
    });
    expect(replay.status).toBe(400);
  });

  it("issues a Bearer token for API callers and sign-out revokes the token it was called with", async () => {
    const cookie = await signedInCookie({ email: email(), verified: true });
    const issued = await call("POST", "/api/v1/auth/tokens", { cookie, origin: BASE });
    expect(issued.status).toBe(200);
    const bearer = issued.body.data.token as string;
    expect((await call("GET", "/api/v1/auth/session", { token: bearer })).status).toBe(200);
    expect((await call("POST", "/api/v1/auth/sign-out", { token: bearer })).status).toBe(200);
    expect((await call("GET", "/api/v1/auth/session", { token: bearer })).status).toBe(401);
    expect((await call("GET", "/api/v1/auth/session", { cookie })).status).toBe(200);
    const out = await call("POST", "/api/v1/auth/sign-out", { cookie, origin: BASE });
    expect(out.status).toBe(200);
    expect(out.headers.get("Set-Cookie")).toMatch(/Max-Age=0/);
    expect((await call("GET", "/api/v1/auth/session", { cookie })).status).toBe(401);
  });
});

describe("the sign-in's OpenID client against the local provider", () => {
  const oidc = inject("oidc");

  /** Starts a sign-in and signs in at the provider; returns the provider's redirect back and the state cookie. */
  async function backFromProvider(): Promise<{ back: URL; state: string }> {
    const start = await SELF.fetch(`${BASE}/api/v1/auth/sign-in`, { redirect: "manual" });
    const state = setCookies(start).get("__Host-affiliate_sign_in_state")!;
    const back = await signInAtProvider(start.headers.get("Location")!, { email: email(), verified: true });
    return { back, state };
  }

  function callback(url: URL, state: string): Promise<Response> {
    return SELF.fetch(url.href, {
      redirect: "manual",
      headers: { Cookie: `__Host-affiliate_sign_in_state=${state}` },
    });
  }

  it("the authorization request names the client and the code flow, and its challenge is the S256 of the stored verifier", async () => {
    const start = await SELF.fetch(`${BASE}/api/v1/auth/sign-in`, { redirect: "manual" });
    const location = new URL(start.headers.get("Location") ?? "");
    expect(`${location.origin}${location.pathname}`).toBe(`${oidc.issuer}/auth`);
    expect(location.searchParams.get("client_id")).toBe(oidc.clientId);
    expect(location.searchParams.get("response_type")).toBe("code");
    expect(location.searchParams.get("scope")).toBe("openid email");
    const state = location.searchParams.get("state")!;
    const [stored] = await db
      .select()
      .from(oauthStates)
      .where(eq(oauthStates.stateHash, await sha256Hex(state)));
    expect(stored?.codeVerifier).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(stored?.nonce).toBe(location.searchParams.get("nonce"));
    const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(stored!.codeVerifier!));
    const challenge = btoa(String.fromCharCode(...new Uint8Array(digest)))
      .replace(/\+/g, "-")
      .replace(/\//g, "_")
      .replace(/=+$/, "");
    expect(location.searchParams.get("code_challenge")).toBe(challenge);
  });

  it.each([
    [
      "an iss of another issuer (RFC 9207 mix-up)",
      (url: URL) => url.searchParams.set("iss", "https://evil.example"),
    ],
    ["no iss, which this provider promises", (url: URL) => url.searchParams.delete("iss")],
    ["no code", (url: URL) => url.searchParams.delete("code")],
    ["the provider's error", (url: URL) => url.searchParams.set("error", "access_denied")],
  ])("refuses a callback with %s (400) and signs no one in", async (_case, tamper) => {
    const { back, state } = await backFromProvider();
    // The provider does send its issuer, so the RFC 9207 cases start from a genuine response.
    expect(back.searchParams.get("iss")).toBe(oidc.issuer);
    tamper(back);
    const response = await callback(back, state);
    expect(response.status).toBe(400);
    expect(((await response.json()) as LooseJson).error.message).toBe(
      "The sign-in provider did not complete the sign-in. Start again.",
    );
    expect(setCookies(response).get("__Host-affiliate_session")).toBeUndefined();
  });

  it("refuses a callback whose state appears twice (ambiguous), even when the first is the browser's", async () => {
    const { back, state } = await backFromProvider();
    back.searchParams.append("state", "attacker-chosen");
    const response = await callback(back, state);
    // The route's query validation refuses it first; finishSignIn would too.
    expect(response.status).toBe(400);
    expect(setCookies(response).get("__Host-affiliate_session")).toBeUndefined();
  });

  it("refuses another flow's code, already exchanged and bound to its PKCE verifier (the token endpoint refuses it)", async () => {
    const { back, state } = await backFromProvider();
    expect((await callback(back, state)).status).toBe(303);
    // A second flow of the same browser replaying the first code under its own state.
    const second = await backFromProvider();
    const replayed = new URL(second.back);
    replayed.searchParams.set("code", back.searchParams.get("code")!);
    const response = await callback(replayed, second.state);
    expect(response.status).toBe(400);
  });
});
