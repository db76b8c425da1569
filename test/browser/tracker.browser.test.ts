import { mkdtemp, rm } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Browser, type BrowserContext, chromium, type Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { type LocalStack, startLocalStack } from "../../dev/local-stack.ts";
import { TRACKER_SOURCE, TRACKER_VERSION } from "../../functions/api/generated/tracker-bundle.ts";
import { CHROMIUM, CHROMIUM_ARGS } from "./chromium.ts";

/**
 * The browser tracker in real headless Chromium against the local stack (`npm run dev`, in-process): the
 * tracking worker serves `/tracker.js`, a small page server plays the brand's site. Chromium maps
 * `*.example.test` to 127.0.0.1, so `shop.example.test` and `www.example.test` are two subdomains of one
 * registrable domain, both served by the page server.
 *
 * Page paths: `/<program id>/...` selects `data-program-id`; a segment `double` includes the script twice,
 * `versioned` loads `/tracker/v<version>.js`, `no-visits` sets `data-visits="off"`, `timeout` sets
 * `data-timeout-ms` to {@link SHORT_TIMEOUT_MS}.
 */

const BROWSER_ARGS = [...CHROMIUM_ARGS, "--host-resolver-rules=MAP *.example.test 127.0.0.1"];
const DAY = 86_400;
const SHORT_TIMEOUT_MS = 500;

let dataDir: string;
let stack: LocalStack;
let pages: Server;
let pagePort: number;
let browser: Browser;
const contexts: BrowserContext[] = [];

const siteUrl = (host: string, path: string) => `http://${host}:${pagePort}${path}`;
const shop = (path: string) => siteUrl("shop.example.test", path);

function pageHtml(path: string, scriptSrc?: string): string {
  const segments = path.split("?")[0]!.split("/");
  const programId = segments[1] && /^\d+$/.test(segments[1]) ? segments[1] : "1";
  const src =
    scriptSrc ??
    (segments.includes("versioned")
      ? `${stack.baseUrl}/tracker/v${TRACKER_VERSION}.js`
      : `${stack.baseUrl}/tracker.js`);
  const visits = segments.includes("no-visits") ? ' data-visits="off"' : "";
  const timeout = segments.includes("timeout") ? ` data-timeout-ms="${SHORT_TIMEOUT_MS}"` : "";
  const tag = `<script src="${src}" data-program-id="${programId}"${visits}${timeout}></script>`;
  return `<!doctype html>
<html><head><meta charset="utf-8"><title>Shop</title>
${tag}
${segments.includes("double") ? tag : ""}
</head><body>
<button id="button" onclick="document.getElementById('out').textContent = 'clicked'">Try it</button>
<p id="out"></p>
<a id="pay" href="https://buy.stripe.com/test_abc123">Pay</a>
<a id="pay-own" href="https://buy.stripe.com/test_own?client_reference_id=brand-ref-42">Pay (own reference)</a>
<a id="other" href="https://shop.example/checkout">Other link</a>
<stripe-buy-button id="buy-button" buy-button-id="buy_btn_1" publishable-key="pk_test_1"></stripe-buy-button>
<stripe-pricing-table id="pricing" pricing-table-id="prctbl_1" publishable-key="pk_test_1"></stripe-pricing-table>
</body></html>`;
}

interface OpenPage {
  page: Page;
  context: BrowserContext;
  /** Uncaught errors of the page (`pageerror`). */
  errors: Error[];
  /** The API calls the page made, as `METHOD /path` (preflights not included). */
  calls: string[];
}

async function newContext(): Promise<BrowserContext> {
  const context = await browser.newContext();
  contexts.push(context);
  return context;
}

async function open(url: string, context?: BrowserContext, setup?: (page: Page) => Promise<unknown>) {
  const ctx = context ?? (await newContext());
  const page = await ctx.newPage();
  const opened: OpenPage = { page, context: ctx, errors: [], calls: [] };
  page.on("pageerror", (error) => opened.errors.push(error));
  page.on("request", (request) => {
    if (request.url().startsWith(`${stack.baseUrl}/api/`) && request.method() !== "OPTIONS") {
      opened.calls.push(`${request.method()} ${new URL(request.url()).pathname}`);
    }
  });
  await setup?.(page);
  await page.goto(url);
  return opened;
}

/** The tracker's `ready` (the click id or null), after the page's own loading settled. */
async function ready(page: Page): Promise<string | null> {
  return (await page.evaluate("window.serviceTracker.ready")) as string | null;
}

async function clickCookie(context: BrowserContext) {
  const cookies = await context.cookies();
  return cookies.find((cookie) => cookie.name === "service_click_id");
}

async function clickRows(clickId: string) {
  const { rows } = await stack.sql.query(
    `select c.click_id, c.visitor_click_id, c.program_id, p.name as partner
       from affiliate_click_events c join partners p on p.id = c.partner_id
      where c.click_id = $1 or c.visitor_click_id = $1 order by c.id`,
    [clickId],
  );
  return rows;
}

async function settle(page: Page): Promise<void> {
  await page.waitForLoadState("networkidle");
  await page.waitForTimeout(300);
}

describe("browser tracker in Chromium", () => {
  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), "tracker-browser-test-"));
    stack = await startLocalStack({ dataDir: join(dataDir, "stack"), port: 0, logLevel: "error" });
    pages = createServer((request, response) => {
      response.writeHead(200, { "Content-Type": "text/html; charset=utf-8", "Cache-Control": "no-store" });
      response.end(pageHtml(request.url ?? "/"));
    });
    await new Promise<void>((resolve) => pages.listen(0, "127.0.0.1", resolve));
    pagePort = (pages.address() as AddressInfo).port;
    // The brand's sites (not `localhost:<port>`, kept as an origin no program allows).
    const origins = ["127.0.0.1", "shop.example.test", "www.example.test"].map((host) => siteUrl(host, ""));
    await stack.sql.query(
      "update programs set allowed_origins = allowed_origins || $1::text[] where id = any($2::int[])",
      [origins, [1, 2]],
    );
    browser = await chromium.launch({ executablePath: CHROMIUM, args: BROWSER_ARGS });
  }, 120_000);

  afterEach(async () => {
    for (const context of contexts.splice(0)) await context.close();
  });

  afterAll(async () => {
    await browser?.close();
    await new Promise((resolve) => pages?.close(resolve));
    await stack?.stop();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  }, 60_000);

  it("records the click and keeps its id in the cookie for the program's window", async () => {
    const { page, context, errors, calls } = await open(shop("/1/landing?aff=code-a"));
    const clickId = await ready(page);
    expect(clickId).toMatch(/^clk_[\w-]{22}$/);
    const cookie = await clickCookie(context);
    expect(cookie).toMatchObject({ value: clickId, path: "/", sameSite: "Lax", secure: false });
    expect(cookie!.expires - Date.now() / 1000).toBeGreaterThan(60 * DAY - 120);
    expect(cookie!.expires - Date.now() / 1000).toBeLessThanOrEqual(60 * DAY + 1);
    expect(await page.evaluate("window.serviceTracker.getClickId()")).toBe(clickId);
    const rows = await clickRows(clickId!);
    expect(rows).toEqual([
      { click_id: clickId, visitor_click_id: null, program_id: "1", partner: "Demo Partner A" },
    ]);
    expect(calls).toEqual(["POST /api/v1/track/click"]);
    expect(errors).toEqual([]);
  });

  it("sets the cookie on the registrable domain, so another subdomain reads it and records a visit", async () => {
    const landing = await open(shop("/1/landing?aff=code-a"));
    const clickId = await ready(landing.page);
    expect((await clickCookie(landing.context))?.domain).toBe(".example.test");
    // No probe cookie is left behind.
    expect((await landing.context.cookies()).map((c) => c.name)).toEqual(["service_click_id"]);

    const other = await open(siteUrl("www.example.test", "/1/pricing"), landing.context);
    expect(await ready(other.page)).toBe(clickId);
    await settle(other.page);
    expect(other.calls).toEqual(["POST /api/v1/track/visit"]);
    const { rows } = await stack.sql.query(
      "select url, click_id, program_id from affiliate_visit_events where click_id = $1",
      [clickId],
    );
    expect(rows).toEqual([
      { url: siteUrl("www.example.test", "/1/pricing"), click_id: clickId, program_id: "1" },
    ]);
    expect([...landing.errors, ...other.errors]).toEqual([]);
  });

  it("keeps the first click through a second partner's link: same id, cookie untouched", async () => {
    const first = await open(shop("/1/landing?aff=code-a"));
    const clickId = await ready(first.page);
    const before = await clickCookie(first.context);
    // Long enough that a rewritten cookie would get a later expiry.
    await first.page.waitForTimeout(1_100);

    const second = await open(shop("/1/landing?via=code-b"), first.context);
    expect(await ready(second.page)).toBe(clickId);
    const after = await clickCookie(first.context);
    expect(after).toEqual(before);
    const rows = await clickRows(clickId!);
    expect(rows.map((row) => [row.visitor_click_id, row.partner])).toEqual([
      [null, "Demo Partner A"],
      [clickId, "Demo Partner B"],
    ]);
    expect(second.calls).toEqual(["POST /api/v1/track/click"]);
    expect([...first.errors, ...second.errors]).toEqual([]);
  });

  it("answers a browser lead provisional under server_required (program 1)", async () => {
    const { page, errors } = await open(shop("/1/signup?aff=code-a"));
    const clickId = await ready(page);
    const key = `browser-${crypto.randomUUID()}`;
    const answer = await page.evaluate(
      `window.serviceTracker.lead({ customer_key: ${JSON.stringify(key)}, email: "jane@shop.example" })`,
    );
    expect(answer).toEqual({ success: true, provisional: true, message: expect.any(String) });
    const { rows } = await stack.sql.query(
      "select provisional, program_id, customer_key, email_masked from affiliate_lead_events where click_id = $1",
      [clickId],
    );
    expect(rows).toEqual([
      { provisional: "t", program_id: "1", customer_key: key, email_masked: expect.stringMatching(/@shop/) },
    ]);
    expect(errors).toEqual([]);
  });

  it("answers a browser lead settled under browser_allowed (program 2), sending it once", async () => {
    const { page, errors, calls } = await open(shop("/2/signup?aff=code-c"));
    const clickId = await ready(page);
    const key = `browser-${crypto.randomUUID()}`;
    const [answer, again] = (await page.evaluate(`Promise.all([
      window.serviceTracker.lead({ customer_key: ${JSON.stringify(key)} }),
      window.serviceTracker.lead({ customer_key: ${JSON.stringify(key)} }),
    ])`)) as [unknown, unknown];
    expect(answer).toEqual({ success: true, message: expect.any(String) });
    expect(again).toEqual(answer);
    expect(calls.filter((call) => call.endsWith("/lead"))).toHaveLength(1);
    const { rows } = await stack.sql.query(
      "select status, customer_key from customers where click_id = $1 and program_id = 2",
      [clickId],
    );
    expect(rows).toEqual([{ status: "lead", customer_key: key }]);
    expect(errors).toEqual([]);
  });

  it("sends a lead and config again after an answer that may pass (429, 5xx), not after a success", async () => {
    // The first lead and the first config answer 429, as the limiter would; later ones reach the service.
    let refusedLead = false;
    let failedConfig = false;
    const { page, errors, calls } = await open(shop("/2/signup-retry?aff=code-c"), undefined, (p) =>
      Promise.all([
        p.route(`${stack.baseUrl}/api/v1/track/lead`, (route) => {
          if (refusedLead) return route.continue();
          refusedLead = true;
          return route.fulfill({
            status: 429,
            contentType: "application/json",
            headers: { "Access-Control-Allow-Origin": "*" },
            body: JSON.stringify({
              error: {
                status: 429,
                code: "rate_limited",
                message: "Too many requests.",
                retry_after_seconds: 1,
              },
            }),
          });
        }),
        p.route(`${stack.baseUrl}/api/v1/track/config?**`, (route) => {
          if (failedConfig) return route.continue();
          failedConfig = true;
          return route.fulfill({
            status: 500,
            contentType: "application/json",
            headers: { "Access-Control-Allow-Origin": "*" },
            // The platform envelope of a 500, as the config route answers one.
            body: JSON.stringify({
              data: null,
              error: { status: 500, name: "InternalServerError", message: "Failed.", details: {} },
            }),
          });
        }),
      ]),
    );
    await ready(page);
    const key = JSON.stringify(`retry-${crypto.randomUUID()}`);
    const first = (await page.evaluate(`window.serviceTracker.lead({ customer_key: ${key} })`)) as Record<
      string,
      unknown
    >;
    expect(first.error).toMatchObject({ code: "rate_limited" });
    const second = await page.evaluate(`window.serviceTracker.lead({ customer_key: ${key} })`);
    expect(second).toEqual({ success: true, message: expect.any(String) });
    // A success is kept: asked a third time, nothing is sent.
    expect(await page.evaluate(`window.serviceTracker.lead({ customer_key: ${key} })`)).toEqual(second);
    expect(calls.filter((call) => call.endsWith("/lead"))).toHaveLength(2);
    const failed = (await page.evaluate("window.serviceTracker.config()")) as Record<string, unknown>;
    expect(failed.error).toMatchObject({ status: 500 });
    expect(await page.evaluate("window.serviceTracker.config()")).toMatchObject({ program_id: 2 });
    expect(errors).toEqual([]);
  });

  it("records a landing URL longer than 2,048 characters as its path with the referral and utm parameters", async () => {
    const junk = "x".repeat(2_100);
    const { page, errors } = await open(shop(`/1/long?gclid=${junk}&aff=code-a&utm_source=news`));
    const clickId = await ready(page);
    expect(clickId).toMatch(/^clk_/);
    const { rows } = await stack.sql.query(
      "select affiliate_url, utm_source from affiliate_click_events where click_id = $1",
      [clickId],
    );
    expect(rows).toEqual([{ affiliate_url: shop("/1/long?aff=code-a&utm_source=news"), utm_source: "news" }]);
    expect(errors).toEqual([]);
  });

  it("writes the click id as client_reference_id into payment links, buy buttons and pricing tables", async () => {
    const { page, errors } = await open(shop("/1/versioned/pricing?aff=code-a"));
    const clickId = (await ready(page))!;
    const href = (selector: string) => page.getAttribute(selector, "href");
    const reference = (selector: string) => page.getAttribute(selector, "client-reference-id");
    expect(await href("#pay")).toBe(`https://buy.stripe.com/test_abc123?client_reference_id=${clickId}`);
    expect(await href("#pay-own")).toBe("https://buy.stripe.com/test_own?client_reference_id=brand-ref-42");
    expect(await href("#other")).toBe("https://shop.example/checkout");
    expect(await reference("#buy-button")).toBe(clickId);
    expect(await reference("#pricing")).toBe(clickId);

    // Elements added later are written too (MutationObserver).
    await page.evaluate(`(() => {
      const link = document.createElement("a");
      link.id = "late-link";
      link.href = "https://buy.stripe.com/test_late?prefilled_email=a%40b.example";
      document.body.append(link);
      const table = document.createElement("stripe-pricing-table");
      table.id = "late-table";
      document.body.append(table);
    })()`);
    await expect
      .poll(() => href("#late-link"))
      .toBe(`https://buy.stripe.com/test_late?prefilled_email=a%40b.example&client_reference_id=${clickId}`);
    await expect.poll(() => reference("#late-table")).toBe(clickId);

    // Links inside a subtree added at once, and a link whose href changes to a payment link later.
    await page.evaluate(`(() => {
      const section = document.createElement("section");
      section.innerHTML = '<div><a id="nested-link" href="https://buy.stripe.com/test_nested">Pay</a>' +
        '<stripe-buy-button id="nested-button"></stripe-buy-button></div>';
      document.body.append(section);
      document.getElementById("other").href = "https://buy.stripe.com/test_changed";
    })()`);
    await expect
      .poll(() => href("#nested-link"))
      .toBe(`https://buy.stripe.com/test_nested?client_reference_id=${clickId}`);
    await expect.poll(() => reference("#nested-button")).toBe(clickId);
    await expect
      .poll(() => href("#other"))
      .toBe(`https://buy.stripe.com/test_changed?client_reference_id=${clickId}`);
    expect(errors).toEqual([]);
  });

  it("looks only at added or changed elements after the first pass, not the whole document", async () => {
    const { page, errors } = await open(shop("/1/pricing?aff=code-a"), undefined, (p) =>
      // Counts whole-document queries; element subtree queries (`Element.prototype`) are not counted.
      p.addInitScript(`(() => {
        const original = Document.prototype.querySelectorAll;
        window.__documentQueries = 0;
        Document.prototype.querySelectorAll = function (...args) {
          window.__documentQueries++;
          return original.apply(this, args);
        };
      })()`),
    );
    const clickId = (await ready(page))!;
    await settle(page);
    const before = (await page.evaluate("window.__documentQueries")) as number;
    await page.evaluate(`(async () => {
      for (let i = 0; i < 20; i++) {
        const item = document.createElement("p");
        item.textContent = "item " + i;
        document.body.append(item);
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
      const link = document.createElement("a");
      link.id = "after-churn";
      link.href = "https://buy.stripe.com/test_churn";
      document.body.append(link);
    })()`);
    await expect
      .poll(() => page.getAttribute("#after-churn", "href"))
      .toBe(`https://buy.stripe.com/test_churn?client_reference_id=${clickId}`);
    expect(await page.evaluate("window.__documentQueries")).toBe(before);
    expect(errors).toEqual([]);
  });

  it("leaves payment links alone when the visitor has no click id", async () => {
    const { page, errors, calls } = await open(shop("/1/pricing"));
    expect(await ready(page)).toBeNull();
    await settle(page);
    expect(await page.getAttribute("#pay", "href")).toBe("https://buy.stripe.com/test_abc123");
    expect(await page.getAttribute("#buy-button", "client-reference-id")).toBeNull();
    expect(await page.evaluate("window.serviceTracker.lead({ customer_key: 'x' })")).toEqual({
      success: false,
      error: { code: "no_click_id", message: expect.any(String) },
    });
    expect(calls).toEqual([]);
    expect(errors).toEqual([]);
  });

  it("keeps the page working when the API is blocked, the script is blocked, or the program is unknown", async () => {
    const blockApi = (page: Page) => page.route(`${stack.baseUrl}/api/**`, (route) => route.abort());
    const blocked = await open(shop("/1/landing?aff=code-a"), undefined, blockApi);
    expect(await ready(blocked.page)).toBeNull();
    expect(await blocked.page.evaluate("window.serviceTracker.lead({ customer_key: 'k' })")).toEqual({
      success: false,
      error: { code: "no_click_id", message: expect.any(String) },
    });
    expect(await blocked.page.evaluate("window.serviceTracker.config()")).toEqual({
      success: false,
      error: { code: "network_error", message: expect.any(String) },
    });
    await blocked.page.click("#button");
    expect(await blocked.page.textContent("#out")).toBe("clicked");
    expect(await clickCookie(blocked.context)).toBeUndefined();
    expect(blocked.errors).toEqual([]);

    // With a click id but the API gone: the lead resolves with a network error.
    const withCookie = await open(shop("/1/landing?aff=code-a"));
    await ready(withCookie.page);
    const offline = await open(shop("/1/account"), withCookie.context, blockApi);
    expect(await offline.page.evaluate("window.serviceTracker.lead({ customer_key: 'k' })")).toEqual({
      success: false,
      error: { code: "network_error", message: expect.any(String) },
    });
    await offline.page.click("#button");
    expect(await offline.page.textContent("#out")).toBe("clicked");
    expect(offline.errors).toEqual([]);

    const noScript = await open(shop("/1/landing?aff=code-a"), undefined, (page) =>
      page.route(`${stack.baseUrl}/tracker.js`, (route) => route.abort()),
    );
    await noScript.page.click("#button");
    expect(await noScript.page.textContent("#out")).toBe("clicked");
    expect(await noScript.page.evaluate("typeof window.serviceTracker")).toBe("undefined");
    expect(noScript.errors).toEqual([]);

    const unknown = await open(shop("/999999/landing?aff=code-a"));
    expect(await ready(unknown.page)).toBeNull();
    expect(await unknown.page.evaluate("window.serviceTracker.config()")).toMatchObject({
      data: null,
      error: { status: 400, message: "Unknown program_id" },
    });
    await unknown.page.click("#button");
    expect(await unknown.page.textContent("#out")).toBe("clicked");
    expect(unknown.errors).toEqual([]);
  });

  it("tells a page its origin is not allowed, and still does not break it", async () => {
    const { page, errors, context } = await open(siteUrl("localhost", "/2/landing?aff=code-c"));
    // No program allows this origin: the preflight is refused, so no click is sent and no cookie set.
    expect(await ready(page)).toBeNull();
    expect(await clickCookie(context)).toBeUndefined();
    expect(await page.evaluate("window.serviceTracker.lead({ customer_key: 'k' })")).toMatchObject({
      success: false,
      error: { code: "no_click_id" },
    });
    expect(await page.evaluate("window.serviceTracker.config()")).toEqual({
      success: true,
      program_id: 2,
      cookie_window_days: 60,
      lead_capture_mode: "browser_allowed",
      origin_allowed: false,
    });
    const allowed = await open(shop("/2/pricing"));
    expect(await allowed.page.evaluate("window.serviceTracker.config()")).toMatchObject({
      origin_allowed: true,
    });
    expect([...errors, ...allowed.errors]).toEqual([]);
  });

  it("sends one click per page view even when the script is included twice", async () => {
    const marker = crypto.randomUUID();
    const { page, errors, calls } = await open(shop(`/1/double/landing?aff=code-a&m=${marker}`));
    const clickId = await ready(page);
    await settle(page);
    expect(calls).toEqual(["POST /api/v1/track/click"]);
    const { rows } = await stack.sql.query(
      "select click_id from affiliate_click_events where affiliate_url like $1",
      [`%m=${marker}`],
    );
    expect(rows).toEqual([{ click_id: clickId }]);

    const next = await open(shop("/1/double/next"), page.context());
    await settle(next.page);
    expect(next.calls).toEqual(["POST /api/v1/track/visit"]);
    const quiet = await open(shop("/1/no-visits/next"), page.context());
    expect(await ready(quiet.page)).toBe(clickId);
    await settle(quiet.page);
    expect(quiet.calls).toEqual([]);
    expect([...errors, ...next.errors, ...quiet.errors]).toEqual([]);
  });
  it("gives up on a stalled request after data-timeout-ms: ready and lead() resolve", async () => {
    // Routes that never answer: the request stays pending until the page gives up on it.
    const hold = (path: string) => (page: Page) => page.route(`${stack.baseUrl}${path}`, () => {});

    const stalledClick = await open(
      shop("/1/timeout/landing?aff=code-a"),
      undefined,
      hold("/api/v1/track/click"),
    );
    // `ready` settles (with no click id) once the click request timed out, counted from the page's start.
    const [readyId, readyAt] = (await stalledClick.page.evaluate(
      "window.serviceTracker.ready.then((id) => [id, performance.now()])",
    )) as [string | null, number];
    expect(readyId).toBeNull();
    expect(readyAt).toBeGreaterThanOrEqual(SHORT_TIMEOUT_MS);
    expect(readyAt).toBeLessThan(SHORT_TIMEOUT_MS + 3_000);
    expect(await clickCookie(stalledClick.context)).toBeUndefined();
    expect(stalledClick.calls).toEqual(["POST /api/v1/track/click"]);

    // A visitor with a click id whose lead request stalls: lead() answers network_error after the timeout.
    const landing = await open(shop("/1/landing?aff=code-a"));
    expect(await ready(landing.page)).toMatch(/^clk_/);
    const account = await open(shop("/1/timeout/account"), landing.context, hold("/api/v1/track/lead"));
    const { answer, elapsed } = (await account.page.evaluate(`(async () => {
      const started = performance.now();
      const answer = await window.serviceTracker.lead({ customer_key: "stalled" });
      return { answer, elapsed: performance.now() - started };
    })()`)) as { answer: unknown; elapsed: number };
    expect(answer).toEqual({ success: false, error: { code: "network_error", message: expect.any(String) } });
    // Timer granularity: allow a few milliseconds below the nominal timeout.
    expect(elapsed).toBeGreaterThanOrEqual(SHORT_TIMEOUT_MS - 20);
    expect(elapsed).toBeLessThan(SHORT_TIMEOUT_MS + 3_000);
    expect(account.calls.filter((call) => call.endsWith("/lead"))).toEqual(["POST /api/v1/track/lead"]);
    expect([...stalledClick.errors, ...landing.errors, ...account.errors]).toEqual([]);
  });

  it("records a landing URL once per tab: a reload or going back is a page view, not another click", async () => {
    const marker = crypto.randomUUID();
    const landingUrl = shop(`/1/landing?aff=code-a&m=${marker}`);
    const clicksOf = (calls: string[]) => calls.filter((call) => call.endsWith("/click"));
    const { page, context, errors, calls } = await open(landingUrl);
    const clickId = await ready(page);
    expect(clickId).toMatch(/^clk_/);
    await settle(page);

    await page.reload();
    expect(await ready(page)).toBe(clickId);
    await settle(page);
    await page.goto(shop("/1/pricing"));
    await settle(page);
    await page.goBack();
    expect(page.url()).toBe(landingUrl);
    expect(await ready(page)).toBe(clickId);
    await settle(page);
    expect(clicksOf(calls)).toEqual(["POST /api/v1/track/click"]);
    // The reload (and the pages after it) are page views of the visitor.
    expect(calls[1]).toBe("POST /api/v1/track/visit");
    const { rows } = await stack.sql.query(
      "select click_id from affiliate_click_events where affiliate_url like $1",
      [`%m=${marker}`],
    );
    expect(rows).toEqual([{ click_id: clickId }]);

    // Without the cookie the landing URL is recorded again: a new visitor as far as the site can tell.
    await context.clearCookies();
    await page.reload();
    const newId = await ready(page);
    expect(newId).toMatch(/^clk_/);
    expect(newId).not.toBe(clickId);
    expect(clicksOf(calls)).toHaveLength(2);

    // Another tab opening the same link is another click (the service answers with the cookie's id).
    const otherTab = await open(landingUrl, context);
    expect(await ready(otherTab.page)).toBe(newId);
    expect(clicksOf(otherTab.calls)).toHaveLength(1);
    expect([...errors, ...otherTab.errors]).toEqual([]);
  });

  it("records the click on every load when sessionStorage is blocked, without breaking the page", async () => {
    const { page, errors, calls } = await open(shop("/1/landing?aff=code-a"), undefined, (p) =>
      p.addInitScript(`Object.defineProperty(window, "sessionStorage", {
        get() { throw new DOMException("The operation is insecure.", "SecurityError"); },
      })`),
    );
    const clickId = await ready(page);
    expect(clickId).toMatch(/^clk_/);
    await page.reload();
    expect(await ready(page)).toBe(clickId);
    await settle(page);
    expect(calls).toEqual(["POST /api/v1/track/click", "POST /api/v1/track/click"]);
    await page.click("#button");
    expect(await page.textContent("#out")).toBe("clicked");
    expect(errors).toEqual([]);
  });

  it("marks the cookie Secure on an https page", async () => {
    // An https site without a certificate: Playwright answers every request of the origin itself (page, script
    // and click endpoint), so Chromium sees an https URL and a secure context.
    const origin = "https://shop.example.test";
    const clickId = "clk_SecureCookieTest000000";
    const context = await newContext();
    const page = await context.newPage();
    const errors: Error[] = [];
    page.on("pageerror", (error) => errors.push(error));
    await page.route(`${origin}/**`, (route) => {
      const path = new URL(route.request().url()).pathname;
      if (path === "/tracker.js") {
        return route.fulfill({ contentType: "application/javascript", body: TRACKER_SOURCE });
      }
      if (path === "/api/v1/track/click") {
        return route.fulfill({ json: { success: true, click_id: clickId, cookie_window_days: 30 } });
      }
      return route.fulfill({ contentType: "text/html", body: pageHtml(path, `${origin}/tracker.js`) });
    });
    await page.goto(`${origin}/1/landing?aff=code-a`);
    expect(await page.evaluate("window.isSecureContext")).toBe(true);
    expect(await ready(page)).toBe(clickId);
    const cookie = await clickCookie(context);
    expect(cookie).toMatchObject({
      value: clickId,
      domain: ".example.test",
      path: "/",
      sameSite: "Lax",
      secure: true,
    });
    expect(cookie!.expires - Date.now() / 1000).toBeGreaterThan(30 * DAY - 120);
    expect(cookie!.expires - Date.now() / 1000).toBeLessThanOrEqual(30 * DAY + 1);
    expect(errors).toEqual([]);
  });
});
