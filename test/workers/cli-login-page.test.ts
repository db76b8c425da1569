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

/** A browser that went through a login link and signed in: the callback's page and the cookies it holds. */
interface SignedInBrowser {
  page: Response;
  ip: string;
  /** The code of the link's login: what the approval page shows, and its form sends back. */
  code: string;
  /** `name=value; ...` of the service's cookies the browser holds after the callback. */
  cookies: string;
}

/**
 * A person opening the tool's link in a browser: `/cli/login`, the dashboard sign-in start, the provider's
 * page, the sign-in callback, each hop carrying the cookies the service set, as a browser does.
 */
async function signInThroughLink(
  verificationUrl: string,
  email: string,
  verified = true,
): Promise<SignedInBrowser> {
  const ip = freshIp();
  const link = new URL(verificationUrl);
  const linkPage = await SELF.fetch(`${BASE}${link.pathname}${link.search}`, {
    redirect: "manual",
    headers: { "CF-Connecting-IP": ip },
  });
  expect(linkPage.status).toBe(302);
  expect(linkPage.headers.get("Location")).toBe("/api/v1/auth/sign-in?for=cli");
  const cliCookie = setCookies(linkPage).get("__Host-affiliate_cli_login") ?? "";
  const start = await SELF.fetch(`${BASE}/api/v1/auth/sign-in?for=cli`, {
    redirect: "manual",
    headers: { "CF-Connecting-IP": ip, Cookie: `__Host-affiliate_cli_login=${cliCookie}` },
  });
  const stateCookie = setCookies(start).get("__Host-affiliate_sign_in_state") ?? "";
  const back = await signInAtProvider(start.headers.get("Location") ?? "", { email, verified });
  const page = await SELF.fetch(back.href, {
    redirect: "manual",
    headers: {
      "CF-Connecting-IP": ip,
      Cookie: `__Host-affiliate_sign_in_state=${stateCookie}; __Host-affiliate_cli_login=${cliCookie}`,
    },
  });
  const held = new Map([["__Host-affiliate_cli_login", cliCookie], ...setCookies(page)]);
  const cookies = [...held]
    .filter(([, value]) => value !== "")
    .map(([name, value]) => `${name}=${value}`)
    .join("; ");
  return { page, ip, code: link.searchParams.get("code") ?? "", cookies };
}

/** The approval page's form, submitted by the browser that signed in (its cookies, this service's Origin). */
function approve(
  browser: SignedInBrowser,
  headers: Record<string, string> = { Origin: BASE },
): Promise<Response> {
  return SELF.fetch(`${BASE}/cli/login/approve`, {
    method: "POST",
    redirect: "manual",
    headers: {
      "CF-Connecting-IP": browser.ip,
      Cookie: browser.cookies,
      "Content-Type": "application/x-www-form-urlencoded",
      ...headers,
    },
    body: new URLSearchParams({ code: browser.code }).toString(),
  });
}

async function poll(state: string) {
  return cli("GET", `/api/v1/cli/auth/poll?state=${state}`);
}

/** Signs in through the link and approves: the login is then the person's. */
async function signInAndApprove(verificationUrl: string, email: string): Promise<Response> {
  const browser = await signInThroughLink(verificationUrl, email);
  expect(browser.page.status).toBe(200);
  return approve(browser);
}

describe("the command-line login link (/cli/login) through the dashboard sign-in", () => {
  it("carries a secret of its own, not the state the tool polls with, into a short-lived cookie", async () => {
    const { state, user_code, verification_url } = await startCliLogin();
    const link = new URL(verification_url);
    expect(link.pathname).toBe("/cli/login");
    expect(verification_url).not.toContain(state);
    const secret = link.searchParams.get("login") ?? "";
    expect(secret).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(link.searchParams.get("code")).toBe(user_code);
    const page = await SELF.fetch(`${BASE}${link.pathname}${link.search}`, {
      redirect: "manual",
      headers: { "CF-Connecting-IP": freshIp() },
    });
    expect(page.status).toBe(302);
    expect(page.headers.get("Cache-Control")).toBe("no-store");
    const line = page.headers.get("Set-Cookie") ?? "";
    expect(line).toContain(`__Host-affiliate_cli_login=${secret}`);
    expect(line).toMatch(/HttpOnly; Secure; SameSite=Lax; Max-Age=300/);
    // Whoever saw the link cannot poll the token out with it.
    const polled = await poll(secret);
    expect(polled.status).toBe(404);
    expect(polled.body.error).toMatchObject({ message: "Session not found" });
  });

  it("signing in asks the person to approve the code; nothing is bound until they do", async () => {
    const email = `${unique("link-dev")}@brand.example`;
    const { state, user_code, verification_url } = await startCliLogin();
    const browser = await signInThroughLink(verification_url, email);
    expect(browser.page.status).toBe(200);
    expect(browser.page.headers.get("Content-Type")).toMatch(/^text\/html/);
    const html = await browser.page.text();
    expect(html).toContain("Approve the command-line sign-in?");
    expect(html).toContain(user_code);
    expect(html).toContain('<form method="post" action="/cli/login/approve">');
    expect(html).toContain(`<input type="hidden" name="code" value="${user_code}">`);
    expect(browser.page.headers.get("Content-Security-Policy")).toBe("frame-ancestors 'none'");
    // Signed in to the dashboard; the link's cookie is kept for the approval.
    const cookies = setCookies(browser.page);
    expect(cookies.get("__Host-affiliate_session")).toMatch(/^dst_/);
    expect(cookies.has("__Host-affiliate_cli_login")).toBe(false);
    expect((await poll(state)).body).toMatchObject({ success: true, data: { status: "pending" } });

    const approved = await approve(browser);
    expect(approved.status).toBe(200);
    expect(approved.headers.get("Content-Type")).toMatch(/^text\/html/);
    const done = await approved.text();
    expect(done).toContain("Return to your terminal");
    expect(done).toContain(user_code);
    expect(setCookies(approved).get("__Host-affiliate_cli_login")).toBe("");

    const polled = (await poll(state)).body.data as { token: string };
    expect(polled).toMatchObject({ status: "complete", email });
    expect((await cli("GET", "/api/v1/cli/programs", { token: polled.token })).status).toBe(200);
  });

  it.each([
    ["without an Origin", {}],
    ["from another site", { Origin: "https://evil.example" }],
  ])("an approval %s is refused (403) and binds nothing", async (_name, headers) => {
    const { state, verification_url } = await startCliLogin();
    const browser = await signInThroughLink(verification_url, `${unique("csrf")}@brand.example`);
    const refused = await approve(browser, headers);
    expect(refused.status).toBe(403);
    expect(await refused.json()).toEqual({
      data: null,
      error: { status: 403, name: "ForbiddenError", message: "Cross-site request refused", details: {} },
    });
    expect((await poll(state)).body).toMatchObject({ success: true, data: { status: "pending" } });
  });

  it("an approval without a dashboard sign-in is refused (401) and binds nothing", async () => {
    const { state, verification_url } = await startCliLogin();
    const browser = await signInThroughLink(verification_url, `${unique("nosession")}@brand.example`);
    const onlyLinkCookie = browser.cookies
      .split("; ")
      .filter((pair) => pair.startsWith("__Host-affiliate_cli_login="))
      .join("; ");
    const refused = await approve({ ...browser, cookies: onlyLinkCookie });
    expect(refused.status).toBe(401);
    expect(await refused.json()).toMatchObject({ error: { status: 401, message: "Sign-in required" } });
    expect((await poll(state)).body).toMatchObject({ success: true, data: { status: "pending" } });
  });

  it("a refused person sees why, and the tool's poll answers the same 403 instead of waiting", async () => {
    const { state, verification_url } = await startCliLogin();
    const refused = (
      await signInThroughLink(verification_url, `${unique("unverified")}@brand.example`, false)
    ).page;
    expect(refused.status).toBe(403);
    expect(refused.headers.get("Content-Type")).toMatch(/^text\/html/);
    expect(await refused.text()).toContain(
      "Your email address is not verified with your sign-in provider. Verify it there, then try again.",
    );
    const cookies = setCookies(refused);
    expect(cookies.get("__Host-affiliate_cli_login")).toBe("");
    expect(cookies.has("__Host-affiliate_session")).toBe(false);
    const polled = await poll(state);
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
    expect(await later.page.text()).toContain("expired or was already used");
    expect(setCookies(later.page).get("__Host-affiliate_cli_login")).toBe("");
    expect((await poll(state)).status).toBe(403);

    const used = await startCliLogin();
    await signInAndApprove(used.verification_url, `${unique("first")}@brand.example`);
    const refused = (
      await signInThroughLink(used.verification_url, `${unique("unverified")}@brand.example`, false)
    ).page;
    expect(refused.status).toBe(403);
    const page = await refused.text();
    expect(page).toContain("Sign-in refused");
    expect(page).not.toContain("stops waiting");
    expect((await poll(used.state)).body).toMatchObject({ success: true, data: { status: "complete" } });
  });

  it("a link used once does not sign in a second browser", async () => {
    const { state, verification_url } = await startCliLogin();
    await signInAndApprove(verification_url, `${unique("first")}@brand.example`);
    const second = await signInThroughLink(verification_url, `${unique("second")}@brand.example`);
    expect(second.page.status).toBe(200);
    expect(await second.page.text()).toContain("expired or was already used");
    const polled = (await poll(state)).body.data as { email: string };
    expect(polled.email).toMatch(/^first-/);
  });

  it("of two browsers waiting on the approval page, the first to approve has the login; the other is told", async () => {
    const { state, verification_url } = await startCliLogin();
    const first = await signInThroughLink(verification_url, `${unique("first")}@brand.example`);
    const second = await signInThroughLink(verification_url, `${unique("second")}@brand.example`);
    expect(await first.page.text()).toContain("Approve the command-line sign-in?");
    expect(await second.page.text()).toContain("Approve the command-line sign-in?");
    expect(await (await approve(first)).text()).toContain("Return to your terminal");
    expect(await (await approve(second)).text()).toContain("expired or was already used");
    const polled = (await poll(state)).body.data as { email: string };
    expect(polled.email).toMatch(/^first-/);
  });

  it("an approval binds nothing when the browser's link cookie was swapped for another login after the page showed its code", async () => {
    const victim = await startCliLogin();
    const attacker = await startCliLogin();
    const browser = await signInThroughLink(victim.verification_url, `${unique("victim")}@brand.example`);
    expect(await browser.page.text()).toContain(victim.user_code);
    // Another site navigates the browser to its own link: the link's cookie now names the attacker's login.
    const attackerLink = new URL(attacker.verification_url);
    const planted = await SELF.fetch(`${BASE}${attackerLink.pathname}${attackerLink.search}`, {
      redirect: "manual",
      headers: { "CF-Connecting-IP": browser.ip },
    });
    const swapped = browser.cookies.replace(
      /__Host-affiliate_cli_login=[^;]*/,
      `__Host-affiliate_cli_login=${setCookies(planted).get("__Host-affiliate_cli_login")}`,
    );
    const approved = await approve({ ...browser, cookies: swapped });
    expect(approved.status).toBe(200);
    expect(await approved.text()).toContain("Nothing was approved");
    expect(setCookies(approved).get("__Host-affiliate_cli_login")).toBe("");
    for (const state of [attacker.state, victim.state]) {
      expect((await poll(state)).body).toMatchObject({ success: true, data: { status: "pending" } });
    }
  });

  it("an ordinary dashboard sign-in clears a link cookie left in the browser; only the link's own sign-in keeps it", async () => {
    const withLeftCookie = {
      "CF-Connecting-IP": freshIp(),
      Cookie: `__Host-affiliate_cli_login=${"a".repeat(43)}`,
    };
    const plain = await SELF.fetch(`${BASE}/api/v1/auth/sign-in`, {
      redirect: "manual",
      headers: withLeftCookie,
    });
    expect(plain.status).toBe(302);
    expect(setCookies(plain).get("__Host-affiliate_cli_login")).toBe("");
    const fromLink = await SELF.fetch(`${BASE}/api/v1/auth/sign-in?for=cli`, {
      redirect: "manual",
      headers: withLeftCookie,
    });
    expect(fromLink.status).toBe(302);
    expect(setCookies(fromLink).has("__Host-affiliate_cli_login")).toBe(false);
  });

  it.each([
    ["no secret", ""],
    ["an empty secret", "?login="],
    ["a secret too short", "?login=abc"],
    ["a secret with characters outside base64url", `?login=${"a".repeat(42)}%2F`],
    ["the old state parameter", `?state=${"a".repeat(43)}`],
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
        message: "login is required and must be a login link's secret",
        details: {},
      },
    });
  });
});
