import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Browser, chromium } from "playwright-core";
import { Webhook } from "standardwebhooks";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type LocalStack, PROJECT_ROOT, startLocalStack } from "../../dev/local-stack.ts";
import type { DemoProgram } from "../../dev/seed.ts";
import { CHROMIUM, CHROMIUM_ARGS } from "./chromium.ts";

/**
 * The dashboard's Webhooks section in real headless Chromium against the local stack: add an endpoint (its
 * secret shown once), send a test event and watch its attempt arrive from a real local receiver (verified
 * with the Standard Webhooks library), disable and enable it, rotate its secret, and see a refusal shown.
 */

const ARTIFACTS = join(PROJECT_ROOT, ".test-artifacts", "dashboard");

let dataDir: string;
let stack: LocalStack;
let browser: Browser;
let demo: DemoProgram;
let receiver: Server;
let receiverUrl: string;
const received: { headers: Record<string, string>; body: string }[] = [];

/** The brand's receiver: records each POST and answers 200. */
async function startReceiver(): Promise<void> {
  receiver = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => {
      const headers = Object.fromEntries(
        Object.entries(request.headers).map(([k, v]) => [k, Array.isArray(v) ? v.join(", ") : (v ?? "")]),
      );
      received.push({ headers, body: Buffer.concat(chunks).toString("utf8") });
      response.writeHead(200).end("ok");
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve));
  receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/affiliate-webhooks`;
}

describe("dashboard Webhooks section in Chromium", () => {
  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), "dashboard-webhooks-browser-test-"));
    stack = await startLocalStack({ dataDir: join(dataDir, "stack"), port: 0, logLevel: "error" });
    demo = stack.demo!.programs[0]!;
    await startReceiver();
    await mkdir(ARTIFACTS, { recursive: true });
    browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
  }, 180_000);

  afterAll(async () => {
    await browser?.close();
    await stack?.stop();
    await new Promise((resolve) => receiver?.close(resolve));
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  }, 60_000);

  it("adds an endpoint, sends a test event, sees its attempt, disables, enables and rotates it", async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const page = await context.newPage();
    const problems: string[] = [];
    page.on("pageerror", (error) => problems.push(`page error: ${error.message}`));
    page.on("console", (message) => {
      if (message.type() === "error" && !message.text().startsWith("Failed to load resource")) {
        problems.push(`console: ${message.text()}`);
      }
    });
    const refusals: string[] = [];
    page.on("response", (response) => {
      if (response.status() >= 400 && response.url().startsWith(stack.baseUrl)) {
        refusals.push(`${response.status()} ${new URL(response.url()).pathname}`);
      }
    });

    await page.goto(`${stack.baseUrl}/dashboard`);
    await page.getByRole("button", { name: "owner@demo-brand.example" }).click();
    await page.waitForURL(`${stack.baseUrl}/dashboard`);
    await page.goto(`${stack.baseUrl}/dashboard?program=${demo.program_id}`);
    await page.waitForSelector("html[data-ready=true]");
    const section = page.locator("#webhooks");
    expect(await section.locator('[data-role="empty"]').isVisible()).toBe(true);

    // A refusal is shown in the section, with the route's message.
    await page.getByLabel("URL").fill("http://hooks.example/plain-http");
    await page.getByRole("button", { name: "Add endpoint" }).click();
    const errorBox = page.locator("#webhooks-error");
    await errorBox.waitFor({ state: "visible" });
    expect(await errorBox.textContent()).toMatch(/\(HTTP 400\)$/);
    expect(refusals).toEqual([`400 /api/v1/programs/${demo.program_id}/webhooks`]);
    refusals.length = 0;

    // Adding one: its card appears and its secret is shown once.
    await page.getByLabel("URL").fill(receiverUrl);
    await page.getByLabel("Description (optional)").fill("Our CRM");
    await page.getByRole("button", { name: "Add endpoint" }).click();
    const notice = page.locator("#webhooks-notice");
    await expect.poll(() => notice.textContent()).toMatch(/^Endpoint added\. .*whsec_[A-Za-z0-9+/=]+$/);
    expect(await errorBox.isHidden()).toBe(true);
    const secret = /whsec_[A-Za-z0-9+/=]+/.exec((await notice.textContent()) ?? "")![0];
    const card = section.locator(".webhook-endpoint", { hasText: receiverUrl });
    expect(await card.locator('[data-role="state"]').textContent()).toBe("Enabled");
    expect(await card.locator('[data-role="secret"]').textContent()).toContain("whsec_••••••••");
    expect(await section.locator('[data-role="empty"]').isHidden()).toBe(true);

    // Sending a test event: the receiver verifies it, and its attempt appears in the card.
    await card.getByRole("button", { name: "Send test event" }).click();
    const attempt = card.locator('tbody[data-role="attempts"] tr').first();
    await expect
      .poll(() => attempt.locator('[data-role="result"]').textContent(), { timeout: 20_000 })
      .toBe("Delivered");
    expect(await attempt.locator("td").nth(1).textContent()).toBe("webhook.test");
    expect(await attempt.locator("td").nth(4).textContent()).toBe("200");
    expect(received).toHaveLength(1);
    const event = new Webhook(secret).verify(received[0]!.body, received[0]!.headers) as { id: string };
    expect(await attempt.locator("td").nth(2).textContent()).toBe(event.id);
    await writeFile(join(ARTIFACTS, "dashboard-webhooks.png"), await section.screenshot());

    // Disabling and enabling it again.
    await card.getByRole("button", { name: "Disable" }).click();
    await expect
      .poll(() => card.locator('[data-role="state"]').textContent())
      .toMatch(/^Disabled by a person/);
    expect(await card.getAttribute("data-enabled")).toBe("false");
    await card.getByRole("button", { name: "Enable" }).click();
    await expect.poll(() => card.locator('[data-role="state"]').textContent()).toBe("Enabled");

    // Rotating the secret: confirmed, the new one shown once, the previous one's overlap said.
    page.once("dialog", (dialog) => void dialog.accept());
    await card.getByRole("button", { name: "Rotate secret" }).click();
    await expect.poll(() => notice.textContent()).toMatch(/^New secret \(shown once, copy it now\): whsec_/);
    expect(await notice.textContent()).not.toContain(secret);
    // The endpoints are redrawn from the page once the route answered.
    await expect
      .poll(() => card.locator('[data-role="secret"]').textContent())
      .toContain("the previous secret signs too until");

    // After a reload: the endpoint and its attempt from the server, and no secret anywhere.
    await page.reload();
    await page.waitForSelector("html[data-ready=true]");
    expect(await card.locator('tbody[data-role="attempts"] tr').count()).toBe(1);
    expect(await page.content()).not.toContain(secret);

    expect(refusals).toEqual([]);
    expect(problems).toEqual([]);
    await context.close();
  });
});
