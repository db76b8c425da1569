import { SELF } from "cloudflare:test";
import { describe, expect, inject, it } from "vitest";
import { cli } from "./cli-harness.ts";
import { BASE, setCookies } from "./dashboard-sign-in.ts";
import { freshIp, unique } from "./harness.ts";
import { signInAtProvider } from "./oidc-sign-in.ts";

// The suite's global setup starts the local OpenID provider; injecting it makes that dependency explicit.
inject("oidc");

interface Started {
  state: string;
  user_code: string;
  verification_url: string;
}

async function startCliLogin(): Promise<Started> {
  const started = await cli("POST", "/api/v1/cli/auth/start");
  return started.body.data as Started;
}

/**
 * A person opening the tool's link in a browser: `/cli/login`, the dashboard sign-in start, the provider's
 * page, the sign-in callback, each hop carrying the cookies the service set, as a browser does.
 */
async function signInThroughLink(verificationUrl: string, email: string, verified = true): Promise<Response> {
  const ip = freshIp();
  const link = new URL(verificationUrl);
  const page = await SELF.fetch(`${BASE}${link.pathname}${link.search}`, {
    redirect: "manual",
    headers: { "CF-Connecting-IP": ip },
  });
  expect(page.status).toBe(302);
  expect(page.headers.get("Location")).toBe("/api/v1/auth/sign-in");
  const cliCookie = setCookies(page).get("__Host-affiliate_cli_login") ?? "";
  const start = await SELF.fetch(`${BASE}/api/v1/auth/sign-in`, {
    redirect: "manual",
    headers: { "CF-Connecting-IP": ip, Cookie: `__Host-affiliate_cli_login=${cliCookie}` },
  });
  const stateCookie = setCookies(start).get("__Host-affiliate_sign_in_state") ?? "";
  const back = await signInAtProvider(start.headers.get("Location") ?? "", { email, verified });
  return SELF.fetch(back.href, {
    redirect: "manual",
    headers: {
      "CF-Connecting-IP": ip,
      Cookie: `__Host-affiliate_sign_in_state=${stateCookie}; __Host-affiliate_cli_login=${cliCookie}`,
    },
  });
}

describe("the command-line login link (/cli/login) through the dashboard sign-in", () => {
  it("remembers the state in a short-lived cookie and hands the browser to the sign-in", async () => {
    const { state, verification_url } = await startCliLogin();
    const link = new URL(verification_url);
    expect(link.pathname).toBe("/cli/login");
    const page = await SELF.fetch(`${BASE}${link.pathname}${link.search}`, {
      redirect: "manual",
      headers: { "CF-Connecting-IP": freshIp() },
    });
    expect(page.status).toBe(302);
    expect(page.headers.get("Cache-Control")).toBe("no-store");
    const line = page.headers.get("Set-Cookie") ?? "";
    expect(line).toContain(`__Host-affiliate_cli_login=${state}`);
    expect(line).toMatch(/HttpOnly; Secure; SameSite=Lax; Max-Age=300/);
  });

  it("signing in completes the login: the page names the code, one poll hands out the token", async () => {
    const email = `${unique("link-dev")}@brand.example`;
    const { state, user_code, verification_url } = await startCliLogin();
    const done = await signInThroughLink(verification_url, email);
    expect(done.status).toBe(200);
    expect(done.headers.get("Content-Type")).toMatch(/^text\/html/);
    const html = await done.text();
    expect(html).toContain("Return to your terminal");
    expect(html).toContain(user_code);
    // The browser is signed in to the dashboard too, and the login cookie is cleared.
    const cookies = setCookies(done);
    expect(cookies.get("__Host-affiliate_session")).toMatch(/^dst_/);
    expect(cookies.get("__Host-affiliate_cli_login")).toBe("");

    const polled = (await cli("GET", `/api/v1/cli/auth/poll?state=${state}`)).body.data as { token: string };
    expect(polled).toMatchObject({ status: "complete", email });
    expect((await cli("GET", "/api/v1/cli/programs", { token: polled.token })).status).toBe(200);
  });

  it("a refused person sees why, and the tool's poll answers the same 403 instead of waiting", async () => {
    const { state, verification_url } = await startCliLogin();
    const refused = await signInThroughLink(verification_url, `${unique("unverified")}@brand.example`, false);
    expect(refused.status).toBe(403);
    expect(refused.headers.get("Content-Type")).toMatch(/^text\/html/);
    expect(await refused.text()).toContain(
      "Your email address is not verified with your sign-in provider. Verify it there, then try again.",
    );
    const cookies = setCookies(refused);
    expect(cookies.get("__Host-affiliate_cli_login")).toBe("");
    expect(cookies.has("__Host-affiliate_session")).toBe(false);
    const polled = await cli("GET", `/api/v1/cli/auth/poll?state=${state}`);
    expect(polled.status).toBe(403);
    expect(polled.body.error).toMatchObject({
      status: 403,
      details: { code: "PROVIDER_EMAIL_NOT_VERIFIED" },
    });
  });

  it("a refused sign-in ends the login: the link then signs in nobody, and a refusal on a used link ends nothing", async () => {
    const { state, verification_url } = await startCliLogin();
    await signInThroughLink(verification_url, `${unique("unverified")}@brand.example`, false);
    const later = await signInThroughLink(verification_url, `${unique("later")}@brand.example`);
    expect(await later.text()).toContain("expired or was already used");
    expect((await cli("GET", `/api/v1/cli/auth/poll?state=${state}`)).status).toBe(403);

    const used = await startCliLogin();
    await signInThroughLink(used.verification_url, `${unique("first")}@brand.example`);
    const refused = await signInThroughLink(
      used.verification_url,
      `${unique("unverified")}@brand.example`,
      false,
    );
    expect(refused.status).toBe(403);
    const page = await refused.text();
    expect(page).toContain("Sign-in refused");
    expect(page).not.toContain("stops waiting");
    const polled = await cli("GET", `/api/v1/cli/auth/poll?state=${used.state}`);
    expect(polled.body).toMatchObject({ success: true, data: { status: "complete" } });
  });

  it("a link used once does not sign in a second browser", async () => {
    const { state, verification_url } = await startCliLogin();
    await signInThroughLink(verification_url, `${unique("first")}@brand.example`);
    const second = await signInThroughLink(verification_url, `${unique("second")}@brand.example`);
    expect(second.status).toBe(200);
    expect(await second.text()).toContain("expired or was already used");
    const polled = (await cli("GET", `/api/v1/cli/auth/poll?state=${state}`)).body.data as { email: string };
    expect(polled.email).toMatch(/^first-/);
  });

  it.each([
    ["no state", ""],
    ["an empty state", "?state="],
    ["a state too short", "?state=abc"],
    ["a state with characters outside base64url", `?state=${"a".repeat(42)}%2F`],
  ])("refuses %s with 400 in the platform envelope", async (_name, query) => {
    const response = await SELF.fetch(`${BASE}/cli/login${query}`, {
      redirect: "manual",
      headers: { "CF-Connecting-IP": freshIp() },
    });
    expect(response.status).toBe(400);
    expect(response.headers.get("Set-Cookie")).toBeNull();
    expect(await response.json()).toEqual({
      data: null,
      error: {
        status: 400,
        name: "BadRequestError",
        message: "state is required and must be a login state",
        details: {},
      },
    });
  });
});
