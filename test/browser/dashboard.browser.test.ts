import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Browser, chromium, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type LocalStack, PROJECT_ROOT, startLocalStack } from "../../dev/local-stack.ts";
import type { DemoProgram } from "../../dev/seed.ts";
import { CHROMIUM, CHROMIUM_ARGS } from "./chromium.ts";

/**
 * The dashboard page in real headless Chromium against the local stack (`npm run dev`, in-process): sign in
 * on the local provider, choose the program, create a link, run the verification chain and watch the
 * checklist turn green, see the chart drawn, turn a link off. Screenshots go to `.test-artifacts/dashboard/`
 * (git-ignored).
 */

const ARTIFACTS = join(PROJECT_ROOT, ".test-artifacts", "dashboard");

let dataDir: string;
let stack: LocalStack;
let browser: Browser;
let demo: DemoProgram;

async function post(path: string, body: unknown, headers: Record<string, string> = {}) {
  const response = await fetch(`${stack.baseUrl}${path}`, {
    method: "POST",
    headers: { "Content-Type": "application/json", ...headers },
    body: JSON.stringify(body),
  });
  const text = await response.text();
  if (!response.ok) throw new Error(`${path} answered ${response.status}: ${text}`);
  return JSON.parse(text) as Record<string, unknown>;
}

/**
 * Live traffic for demo program 1 as a brand's site and backend send it (click, server lead, sale, refund),
 * plus a month of earlier clicks and leads copied from it, so the chart has a history. The program records
 * its sales through these calls only (payments disconnected), which its readiness wants from one path.
 */
async function liveTraffic(): Promise<void> {
  await stack.sql.query("update programs set stripe_account_id = null where id = $1", [demo.program_id]);
  const origin = demo.allowed_origins[0]!;
  const auth = { Authorization: `Bearer ${demo.api_key}` };
  for (const [index, code] of demo.active_links.entries()) {
    const click = await post(
      "/api/v1/track/click",
      { affiliate_url: `${origin}/pricing?aff=${code}&utm_source=${index === 0 ? "newsletter" : "blog"}` },
      { Origin: origin },
    );
    const clickId = String(click.click_id);
    const customer = `customer-${index}-${Date.now()}`;
    await post("/api/v1/track/lead", { click_id: clickId, customer_key: customer }, auth);
    const transaction = `txn-${index}-${Date.now()}`;
    await post(
      "/api/v1/track/sale",
      {
        click_id: clickId,
        customer_key: customer,
        transaction_id: transaction,
        amount_cents: 4900 + index * 2000,
        currency: "USD",
      },
      auth,
    );
    if (index === 0) {
      await post(
        "/api/v1/track/refund",
        { transaction_id: transaction, refund_amount_cents: 900, refund_id: `refund-${Date.now()}` },
        auth,
      );
    }
  }
  await stack.sql.query(
    `insert into affiliate_click_events (click_id, program_id, partner_id, link_id, affiliate_url, referrer, is_test, created_at,
                                         referrer_domain, utm_source, utm_medium, utm_campaign, landing_page, landing_origin)
     select 'history-' || c.id || '-' || d || '-' || n, c.program_id, c.partner_id, c.link_id, c.affiliate_url, c.referrer, false,
            now() - make_interval(days => d, hours => n),
            c.referrer_domain, c.utm_source, c.utm_medium, c.utm_campaign, c.landing_page, c.landing_origin
       from affiliate_click_events c, generate_series(1, 29) d, generate_series(1, 3 + (d * 7) % 9) n
      where c.program_id = $1 and not c.is_test`,
    [demo.program_id],
  );
}

/** A new browser signed in on the local provider as one of the demo people, on the dashboard. */
async function signedIn(email: string) {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  await page.goto(`${stack.baseUrl}/dashboard`);
  await page.getByRole("button", { name: email }).click();
  await page.waitForURL(`${stack.baseUrl}/dashboard`);
  await page.waitForSelector("html[data-ready=true]");
  return { context, page };
}

async function checkStatuses(page: Page): Promise<Record<string, string>> {
  return page.$$eval("#readiness li.check", (rows) =>
    Object.fromEntries(rows.map((row) => [row.getAttribute("data-check"), row.getAttribute("data-status")])),
  );
}

/** Non-blank pixels of the chart's canvas (uPlot draws on one canvas inside the chart box). */
async function paintedPixels(page: Page): Promise<number> {
  return page.$eval("#performance-chart canvas", (canvas) => {
    // The test compiles without the DOM library: the canvas as far as this reads it.
    const c = canvas as unknown as {
      width: number;
      height: number;
      getContext(kind: "2d"): {
        getImageData(x: number, y: number, w: number, h: number): { data: Uint8ClampedArray };
      };
    };
    const pixels = c.getContext("2d")!.getImageData(0, 0, c.width, c.height).data;
    let painted = 0;
    for (let i = 3; i < pixels.length; i += 4) if (pixels[i]! > 0) painted++;
    return painted;
  });
}

describe("dashboard page in Chromium", () => {
  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), "dashboard-browser-test-"));
    stack = await startLocalStack({ dataDir: join(dataDir, "stack"), port: 0, logLevel: "error" });
    demo = stack.demo!.programs[0]!;
    await liveTraffic();
    await mkdir(ARTIFACTS, { recursive: true });
    browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
  }, 180_000);

  afterAll(async () => {
    await browser?.close();
    await stack?.stop();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  }, 60_000);

  it("signs in, creates a link, runs the chain to green, draws the chart and turns a link off", async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const page = await context.newPage();
    const problems: string[] = [];
    page.on("pageerror", (error) => problems.push(`page error: ${error.message}`));
    // Errors of the service's own page (the local provider's page asks for a favicon it does not have).
    page.on("console", (message) => {
      if (message.type() === "error" && !message.text().startsWith("Failed to load resource")) {
        problems.push(`console: ${message.text()}`);
      }
    });
    page.on("response", (response) => {
      if (response.status() >= 400 && response.url().startsWith(stack.baseUrl)) {
        problems.push(`${response.status()} ${response.url()}`);
      }
    });

    // Signing in: the page sends the browser to the local provider, whose demo owner is one click away.
    await page.goto(`${stack.baseUrl}/dashboard`);
    expect(new URL(page.url()).pathname).toMatch(/^\/interaction\//);
    await page.getByRole("button", { name: "owner@demo-brand.example" }).click();
    await page.waitForURL(`${stack.baseUrl}/dashboard`);
    await expect.poll(() => page.locator(".who").textContent()).toBe("owner@demo-brand.example");

    // Choosing the workspace's program.
    await page.getByLabel("Program", { exact: true }).selectOption(String(demo.program_id));
    await page.getByRole("button", { name: "Open" }).click();
    await page.waitForURL(`${stack.baseUrl}/dashboard?program=${demo.program_id}`);
    await page.waitForSelector("html[data-ready=true]");
    expect(await page.locator("h1.program-name").textContent()).toBe(demo.name);
    const before = await checkStatuses(page);
    expect(before.test_event).toBe("warn");
    expect(Object.entries(before).filter(([id, status]) => id !== "test_event" && status !== "pass")).toEqual(
      [],
    );
    await expect.poll(() => page.locator("#settings-summary").textContent()).toContain("Lead capture mode:");
    expect(await page.content()).not.toContain(demo.api_key);

    // Creating a link for the first partner.
    const code = `dash-${Date.now().toString(36)}`;
    await page.getByLabel("Code (optional)").fill(code);
    await page.getByRole("button", { name: "Create link" }).click();
    const row = page.locator("#links-rows tr", { hasText: code });
    await page.waitForSelector(
      `#links-rows tr[data-active] code:text-is("${code}"), #links-error:not([hidden])`,
    );
    expect(await page.locator("#links-error").textContent()).toBe("");
    expect(await row.locator('[data-role="state"]').textContent()).toBe("on");
    const clicked = await post("/api/v1/track/click", { affiliate_url: `https://shop.example/?aff=${code}` });
    expect(clicked.success).toBe(true);
    // The same code again is refused, and the refusal goes once the code is edited (a value the browser's
    // own checks then block never reaches the service, so nothing else would clear it).
    await page.getByLabel("Code (optional)").fill(code);
    await page.getByRole("button", { name: "Create link" }).click();
    await page.waitForSelector("#links-error:not([hidden])");
    expect(await page.locator("#links-error").textContent()).toBe("short_link is already taken (HTTP 409)");
    await page.getByLabel("Code (optional)").fill("-bad");
    expect(await page.locator("#links-error").isHidden()).toBe(true);
    await page.getByLabel("Code (optional)").fill("");

    // The verification chain: each step lands, then the checklist turns green.
    await page.getByRole("button", { name: "Run the verification chain" }).click();
    for (const step of ["click", "lead", "sale"]) {
      await page.waitForSelector(`#verification-steps li[data-step="${step}"][data-state="landed"]`);
    }
    await page.waitForSelector('#readiness[data-verdict="ready"]');
    const after = await checkStatuses(page);
    expect(Object.values(after).every((status) => status === "pass")).toBe(true);
    expect(Object.keys(after)).toHaveLength(10);
    expect(await page.locator('[data-role="verdict"]').textContent()).toBe("Ready");
    // The recent events now show the chain's test events, marked as such, beside the live ones.
    await expect.poll(() => page.locator("#events-rows .tag-test").count()).toBeGreaterThanOrEqual(3);
    expect(await page.locator("#events-rows .tag-live").count()).toBeGreaterThan(0);

    // The chart: drawn from 30 days of data, its canvas painted.
    await page.waitForSelector("#performance-chart[data-drawn=true] canvas");
    expect(await paintedPixels(page)).toBeGreaterThan(2000);
    expect(await page.locator("#partner-totals tbody tr").count()).toBeGreaterThanOrEqual(2);
    expect(await page.locator("#analytics-table tbody tr").count()).toBeGreaterThanOrEqual(2);
    await writeFile(join(ARTIFACTS, "dashboard-full.png"), await page.screenshot({ fullPage: true }));
    await page.evaluate("window.scrollTo(0, 0)");
    await writeFile(join(ARTIFACTS, "dashboard-desktop.png"), await page.screenshot());
    await writeFile(join(ARTIFACTS, "dashboard-chart.png"), await page.locator("#performance").screenshot());

    // Turning the new link off, from the keyboard; the click endpoint then refuses it.
    const toggle = row.getByRole("button", { name: `Turn off ${code}` });
    await toggle.focus();
    await page.keyboard.press("Enter");
    await expect.poll(() => row.locator('[data-role="state"]').textContent()).toBe("off");
    expect(await row.getAttribute("data-active")).toBe("false");
    const refused = await fetch(`${stack.baseUrl}/api/v1/track/click`, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ affiliate_url: `https://shop.example/?aff=${code}` }),
    });
    expect(refused.status).toBe(410);
    await page.reload();
    expect(
      await page.locator("#links-rows tr", { hasText: code }).locator('[data-role="state"]').textContent(),
    ).toBe("off");

    // On a phone: one column, nothing wider than the screen, the chart redrawn to fit.
    await page.setViewportSize({ width: 390, height: 844 });
    await page.waitForTimeout(200);
    const overflow = await page.evaluate("document.documentElement.scrollWidth - window.innerWidth");
    expect(overflow as number).toBeLessThanOrEqual(0);
    await writeFile(join(ARTIFACTS, "dashboard-phone.png"), await page.screenshot());

    // The one refusal asked for: the link code taken twice.
    expect(problems).toEqual([`409 ${stack.baseUrl}/api/v1/programs/${demo.program_id}/links`]);
    await context.close();
  });

  it("names the regenerated key among the masked keys at once, the old one retiring", async () => {
    const { context, page } = await signedIn("owner@demo-brand.example");
    page.on("dialog", (dialog) => void dialog.accept());
    const before = await page.locator("#api-keys li").allTextContents();
    await page.getByLabel("Key", { exact: true }).selectOption("test");
    await page.getByRole("button", { name: "Regenerate" }).click();
    await page.waitForSelector("#new-key:not([hidden]), #regenerate-error:not([hidden])");
    const shown = /(sk_test_\S+)$/.exec((await page.locator("#new-key").textContent()) ?? "")?.[1];
    expect(shown).toBeDefined();
    const masked = `${shown!.slice(0, 12)}...${shown!.slice(-4)}`;
    // Without a reload: the list names the new key and the old one's retirement day, as the server renders it.
    await expect.poll(() => page.locator("#api-keys").textContent()).toContain(`${masked} (test)`);
    expect(await page.locator("#api-keys li").count()).toBe(before.length + 1);
    expect(await page.locator("#api-keys").textContent()).toMatch(/\(test\), retiring \d{4}-\d{2}-\d{2}/);
    expect(await page.locator("#settings-summary").textContent()).toContain(`Test API key: ${masked}`);
    const rendered = await page.locator("#api-keys").innerHTML();
    await page.reload();
    expect(await page.locator("#api-keys").innerHTML()).toBe(rendered);
    expect(await page.content()).not.toContain(shown!);
    await context.close();
  });

  it("says a refused sign-out did not sign out, beside the button", async () => {
    const { context, page } = await signedIn("member@demo-brand.example");
    // The sign-out shares the dashboard bucket (60 a minute per sign-in) with links and programs: spend it, up
    // to its first refusal (the bucket's minute may turn while the page loads and the calls run, on a loaded
    // machine: 60 calls counted from the test's start then left the sign-out room).
    const statuses = await page.evaluate(async () => {
      const seen: number[] = [];
      while (seen.length < 200 && seen.at(-1) !== 429)
        seen.push((await fetch("/api/v1/auth/session")).status);
      return seen;
    });
    expect(statuses.at(-1)).toBe(429);
    expect(statuses.slice(0, -1).every((status) => status === 200)).toBe(true);
    await page.getByRole("button", { name: "Sign out" }).click();
    const error = page.locator("#sign-out-error");
    await expect.poll(() => error.isVisible()).toBe(true);
    expect(await error.textContent()).toMatch(/^Not signed out: Too many requests\..*\(HTTP 429\)$/);
    expect(new URL(page.url()).pathname).toBe("/dashboard");
    expect(await error.getAttribute("role")).toBe("alert");
    // The session is indeed still valid: the page is not "signed out" while it is.
    expect(await page.evaluate(async () => (await fetch("/api/tracking/status/1")).status)).toBe(200);
    // On a phone the message wraps inside the header rather than widening the page.
    await page.setViewportSize({ width: 375, height: 812 });
    await page.waitForTimeout(200);
    const overflow = await page.evaluate("document.documentElement.scrollWidth - window.innerWidth");
    expect(overflow as number).toBeLessThanOrEqual(0);
    await writeFile(join(ARTIFACTS, "dashboard-sign-out-refused.png"), await page.screenshot());
    await context.close();

    // Answered: the sign-in is revoked, then the page says so.
    const other = await signedIn("member@demo-brand.example");
    await other.page.getByRole("button", { name: "Sign out" }).click();
    await other.page.waitForURL(`${stack.baseUrl}/dashboard/signed-out`);
    expect(await other.page.evaluate(async () => (await fetch("/api/tracking/status/1")).status)).toBe(401);
    await other.context.close();
  });
});
