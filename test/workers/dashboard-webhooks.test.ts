import { SELF } from "cloudflare:test";
import { and, desc, eq } from "drizzle-orm";
import { beforeAll, describe, expect, it } from "vitest";
import { attemptsShownPerEndpoint } from "../../lib/dashboard/page/program-webhooks.ts";
import { webhookDeliveryAttempts, webhookEndpoints, workspaceMembers } from "../../schema/index.ts";
import { BASE, call, type Person, programOf, signInPerson } from "./dashboard-tracking-helpers.ts";
import { useFaultSwitch } from "./fault-switch.ts";
import { createProgram, db, freshIp, type ProgramFixture } from "./harness.ts";
import { endpointFor, receiverBox } from "./webhook-harness.ts";

const faults = useFaultSwitch();

/** The page as a browser asks for it: the session cookie, never a Bearer header. */
async function page(programId: number, cookie: string) {
  const response = await SELF.fetch(`${BASE}/dashboard?program=${programId}`, {
    headers: { "CF-Connecting-IP": freshIp(), Cookie: `__Host-affiliate_session=${cookie}` },
    redirect: "manual",
  });
  return { status: response.status, text: await response.text() };
}

/** The Webhooks section's HTML alone (the page's last section). */
function section(html: string): string {
  const start = html.indexOf('<section class="card" aria-labelledby="webhooks-title"');
  if (start < 0) return "";
  return html.slice(start, html.indexOf("</section>", start) + "</section>".length);
}

/** An endpoint created the way the section's script creates one: the JSON route, cookie and this origin. */
async function createThroughRoute(person: Person, programId: number, body: Record<string, unknown>) {
  const answer = await call("POST", `/api/v1/programs/${programId}/webhooks`, {
    cookie: person.token,
    origin: BASE,
    body,
  });
  expect(answer.status).toBe(201);
  return answer.body.data as { endpoint: { id: number }; secret: string };
}

/** "Send test event" through its route; the queue's consumer attempts it against a real local receiver. */
async function testEventAttempted(person: Person, programId: number, endpointId: number) {
  const sent = await call("POST", `/api/v1/programs/${programId}/webhooks/${endpointId}/test`, {
    cookie: person.token,
    origin: BASE,
  });
  expect(sent.status).toBe(202);
  const eventId = String(sent.body.data.event_id);
  const attemptsOf = () =>
    db.select().from(webhookDeliveryAttempts).where(eq(webhookDeliveryAttempts.eventId, eventId));
  await expect.poll(async () => (await attemptsOf()).length, { timeout: 10_000 }).toBe(1);
  const [attempt] = await attemptsOf();
  if (!attempt) throw new Error("no attempt");
  return { eventId, attempt };
}

let owner: Person;
let program: ProgramFixture;

beforeAll(async () => {
  owner = await signInPerson();
  program = await programOf(owner);
});

describe("dashboard page: the Webhooks section", () => {
  it("with no endpoint: the empty state and the form to add one", async () => {
    const own = await programOf(owner);
    const response = await page(own.programId, owner.token);
    expect(response.status).toBe(200);
    const html = section(response.text);
    expect(html).toContain('id="webhooks"');
    expect(html).toContain("No webhook endpoints yet: add one below.");
    expect(html).toContain('<p class="empty" data-role="empty">');
    expect(html).toContain('id="create-webhook"');
    for (const type of ["lead.created", "sale.created", "commission.approved", "link.disabled"]) {
      expect(html).toContain(`value="${type}"`);
    }
    expect(html).not.toContain('class="webhook-endpoint"');
  });

  it("lists each endpoint with its state, masked secret and latest attempts; never a secret", async () => {
    const good = receiverBox();
    const bad = receiverBox();
    await bad.answer(500);
    const delivered = await createThroughRoute(owner, program.programId, {
      url: good.url,
      events: ["sale.created", "commission.approved"],
      description: "<b>CRM</b> & billing",
    });
    const failing = await createThroughRoute(owner, program.programId, {
      url: bad.url,
      events: ["lead.created"],
    });
    const ok = await testEventAttempted(owner, program.programId, delivered.endpoint.id);
    const retried = await testEventAttempted(owner, program.programId, failing.endpoint.id);
    expect([ok.attempt.succeeded, retried.attempt.succeeded]).toEqual([true, false]);
    const now = retried.attempt.attemptedAt;

    const response = await page(program.programId, owner.token);
    expect(response.status).toBe(200);
    const html = section(response.text);
    expect(html).toContain(`data-endpoint-id="${delivered.endpoint.id}" data-enabled="true"`);
    expect(html).toContain(`<code>${good.url}</code>`);
    expect(html).toContain("sale.created, commission.approved");
    expect(html).toContain("&lt;b&gt;CRM&lt;/b&gt; &amp; billing");
    expect(html).toContain("whsec_•••••••• (shown once, when created or rotated)");
    // The delivered test event: type, id, result, the receiver's status, a latency; no next retry.
    const okRow = html.slice(html.indexOf(`<code>${ok.eventId}</code>`) - 200);
    expect(okRow).toMatch(/<td>webhook\.test<\/td><td><code>msg_[0-9a-f]+<\/code><\/td>/);
    expect(okRow).toMatch(
      /<td data-role="result">Delivered<\/td><td>200<\/td><td>\d+ ms<\/td><td>-<\/td><\/tr>/,
    );
    // The failed one: the answer's status, and when the next attempt is due.
    const nextRetry = new Date(now.getTime() + 30_000).toISOString();
    expect(html).toContain(`<code>${retried.eventId}</code>`);
    expect(html).toContain(`<td data-role="result">Failed (HTTP 500), will retry</td><td>500</td>`);
    expect(html).toContain(`${nextRetry.slice(0, 10)} ${nextRetry.slice(11, 19)} UTC`);
    expect(html).toContain(`Enabled, failing since ${now.toISOString().slice(0, 10)}`);
    // The secrets were in the create answers only.
    expect(response.text).not.toContain(delivered.secret);
    expect(response.text).not.toContain(failing.secret);
    expect(response.text).not.toContain(delivered.secret.slice("whsec_".length, 20));
  });

  it.each([
    {
      case: "disabled after three days of failures",
      set: { enabled: false, disabledReason: "failing", disabledAt: new Date("2026-11-20T10:00:00Z") },
      text: "Disabled: every attempt failed for three days (2026-11-20 10:00:00 UTC). Fix the receiver, then enable it again.",
      button: "Enable",
    },
    {
      case: "disabled by a person",
      set: { enabled: false, disabledReason: "by_user", disabledAt: new Date("2026-11-21T08:30:00Z") },
      text: "Disabled by a person (2026-11-21 08:30:00 UTC)",
      button: "Enable",
    },
    { case: "enabled", set: { enabled: true }, text: "Enabled", button: "Disable" },
  ])("shows an endpoint $case, with the action that reverses it", async ({ set, text, button }) => {
    const own = await programOf(owner);
    const endpoint = await endpointFor(own.programId, "https://hooks.example/state", ["sale.created"]);
    await db.update(webhookEndpoints).set(set).where(eq(webhookEndpoints.id, endpoint.id));
    const html = section((await page(own.programId, owner.token)).text);
    expect(html).toContain(`data-enabled="${String(set.enabled)}"`);
    expect(html).toContain(`<dd data-role="state">${text}</dd>`);
    expect(html).toContain(`<button type="button" data-action="toggle">${button}</button>`);
    expect(html).toContain("No delivery attempts yet. Send a test event to try the endpoint.");
  });

  it("shows the previous secret's overlap after a rotation", async () => {
    const own = await programOf(owner);
    const created = await createThroughRoute(owner, own.programId, {
      url: "https://hooks.example/rotate",
      events: ["sale.created"],
    });
    const rotated = await call(
      "POST",
      `/api/v1/programs/${own.programId}/webhooks/${created.endpoint.id}/rotate-secret`,
      {
        cookie: owner.token,
        origin: BASE,
        body: { overlap_hours: 24 },
      },
    );
    expect(rotated.status).toBe(200);
    const until = String(rotated.body.data.endpoint.previous_secret_expires_at);
    const response = await page(own.programId, owner.token);
    expect(section(response.text)).toContain(
      `the previous secret signs too until ${until.slice(0, 10)} ${until.slice(11, 19)} UTC)`,
    );
    expect(response.text).not.toContain(rotated.body.data.secret);
  });

  it(`shows each endpoint's latest ${attemptsShownPerEndpoint} attempts, newest first`, async () => {
    const own = await programOf(owner);
    const box = receiverBox();
    const endpoint = await endpointFor(own.programId, box.url, ["sale.created"]);
    const sent = attemptsShownPerEndpoint + 2;
    for (let i = 0; i < sent; i++) {
      const answer = await call("POST", `/api/v1/programs/${own.programId}/webhooks/${endpoint.id}/test`, {
        cookie: owner.token,
        origin: BASE,
      });
      expect(answer.status).toBe(202);
    }
    const storedAttempts = () =>
      db
        .select({ eventId: webhookDeliveryAttempts.eventId })
        .from(webhookDeliveryAttempts)
        .where(eq(webhookDeliveryAttempts.endpointId, endpoint.id))
        .orderBy(desc(webhookDeliveryAttempts.attemptedAt), desc(webhookDeliveryAttempts.id));
    await expect.poll(async () => (await storedAttempts()).length, { timeout: 15_000 }).toBe(sent);
    const stored = await storedAttempts();
    const html = section((await page(own.programId, owner.token)).text);
    const shown = [...html.matchAll(/<code>(msg_[0-9a-f]+)<\/code>/g)].map((m) => m[1]);
    expect(shown).toEqual(stored.slice(0, attemptsShownPerEndpoint).map((r) => r.eventId));
  });

  it("shows no other program's endpoints", async () => {
    const own = await programOf(owner);
    const foreign = await createProgram();
    await endpointFor(foreign.programId, "https://hooks.example/someone-else", ["sale.created"]);
    const html = section((await page(own.programId, owner.token)).text);
    expect(html).not.toContain("someone-else");
    expect(html).toContain("No webhook endpoints yet");
  });

  it("a plain member is told who manages webhooks, and sees no endpoint", async () => {
    const member = await signInPerson();
    const own = await programOf(member);
    await endpointFor(own.programId, "https://hooks.example/members-cannot-see", ["sale.created"]);
    await db
      .update(workspaceMembers)
      .set({ role: "member" })
      .where(
        and(
          eq(workspaceMembers.userId, member.userId),
          eq(workspaceMembers.advertiserId, member.advertiserId),
        ),
      );
    const response = await page(own.programId, member.token);
    expect(response.status).toBe(200);
    const html = section(response.text);
    expect(html).toContain("Only a workspace owner or admin can manage webhooks.");
    expect(html).not.toContain("members-cannot-see");
    expect(html).not.toContain('id="create-webhook"');
  });

  it("when the webhooks cannot be read: the rest of the page, and this section says so", async () => {
    const own = await programOf(owner);
    await endpointFor(own.programId, "https://hooks.example/unreadable", ["sale.created"]);
    await faults.arm({ mode: "error", match: "cross join lateral" });
    const response = await page(own.programId, owner.token);
    const state = await faults.clear();
    expect(state.fired).toBe(1);
    expect(response.status).toBe(200);
    for (const id of ["readiness", "events", "links", "settings"])
      expect(response.text).toContain(`id="${id}"`);
    const html = section(response.text);
    expect(html).toContain(
      '<p class="error" role="alert" data-role="unavailable">The webhook endpoints could not be loaded. Reload the page in a moment.</p>',
    );
    expect(html).not.toContain("unreadable");
  });
});
